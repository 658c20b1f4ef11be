"""responsa in front of the shared rig's mock Chat Completions upstream, measured with the rig's own
load generator, as LiteLLM and Llama Stack were (see ../shared/bench/README.md).

Layout on 2 cores: mock and load on core 0, responsa alone on core 1. For each mode (JSON, stream)
and concurrency it runs the rig's load.py --repeat times and prints the median req/s, p50 latency,
the gateway's CPU time per request (steadier than req/s on a shared machine), its peak RSS and the
sockets to the upstream left in TIME_WAIT (0 when connections are reused); then the mock alone at
the same concurrencies (one run each): how fast the machine is at that moment, the yardstick against
which the rig's published figures can be compared. Store on (SQLite), 64 tokens.

    python bench/gateway_rig.py --rig ../shared/bench --rig-python /tmp/rig/bin/python \\
        [--seconds 15] [--repeat 3] [--concurrency 1 16 64]
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
from pathlib import Path

from _server import responsa_server, rig_arguments, rig_load, rig_mock, time_wait_to


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    rig_arguments(parser)
    parser.add_argument("--seconds", type=float, default=15)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--concurrency", type=int, nargs="+", default=[1, 16, 64])
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp, rig_mock(args.rig_python, "--tokens", "64", rig=args.rig) as upstream:
        db = f"sqlite:///{Path(tmp) / 'rig.db'}"
        pids: list[int] = []
        with responsa_server(
            "--db", db, "--no-embedded", "--no-simulator", "--upstream", upstream, pin=1, pids=pids
        ) as url:
            pid = pids[0]
            header = f"{'mode':<7} | {'c':>3} | {'req/s':>8} | {'p50 ms':>8} | {'CPU ms/req':>10} | {'RSS MB':>7}"
            print(f"{header} | errors | TIME_WAIT")
            print("-" * 81)
            for stream in (False, True):
                for concurrency in args.concurrency:
                    flags = ["-c", str(concurrency), "-d", str(args.seconds), "--pid", str(pid), "--store", "true"]
                    runs = [rig_load(args.rig_python, url, *flags, *(["--stream"] if stream else []), rig=args.rig)
                            for _ in range(args.repeat)]  # fmt: skip
                    rps = statistics.median(run["rps"] for run in runs)
                    p50 = statistics.median(run["lat_p50_ms"] for run in runs)
                    rss = max(run.get("server_rss_peak_mb") or 0 for run in runs)
                    cpu = statistics.median(run.get("server_cpu_ms_per_req") or 0 for run in runs)
                    errors = sum(run["errors"] for run in runs)
                    mode = "stream" if stream else "json"
                    waiting = time_wait_to(upstream)
                    row = f"{mode:<7} | {concurrency:>3} | {rps:>8.1f} | {p50:>8.2f} | {cpu:>10.2f} | {rss:>7.0f}"
                    print(f"{row} | {errors:>6} | {waiting}")
        # The upstream alone, afterwards, on the same machine: the yardstick across runs and machines.
        print(f"\nmock alone (chat API):\n{'mode':<7} | {'c':>3} | {'req/s':>8}")
        for stream in (False, True):
            for concurrency in args.concurrency:
                chat = ["--api", "chat", "-c", str(concurrency), "-d", str(args.seconds), *(["--stream"] * stream)]
                alone = rig_load(args.rig_python, upstream.removesuffix("/v1"), *chat, rig=args.rig)
                print(f"{'stream' if stream else 'json':<7} | {concurrency:>3} | {alone['rps']:>8.0f}")
    print(f"\nmedians of {args.repeat} x {args.seconds:g}s, 64 tokens, store on; {os.cpu_count()} cores")


if __name__ == "__main__":
    main()
