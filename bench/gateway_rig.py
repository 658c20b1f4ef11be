"""responsa in front of the shared rig's mock Chat Completions upstream, measured with the rig's own
load generator, as LiteLLM and Llama Stack were (see ../shared/bench/README.md).

Layout on 2 cores: mock and load on core 0, responsa alone on core 1. For each mode (JSON, stream)
and concurrency it runs the rig's load.py --repeat times and prints the median req/s, p50 latency
and peak RSS of the gateway. Store on (SQLite), 64 tokens.

    python bench/gateway_rig.py --rig ../shared/bench --rig-python /tmp/rig/bin/python \\
        [--seconds 15] [--repeat 3] [--concurrency 1 16 64]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from _server import free_port, responsa_server


def load_once(rig: Path, python: str, url: str, pid: int, stream: bool, concurrency: int, seconds: float) -> dict:
    command = ["taskset", "-c", "0", python, str(rig / "load.py"), "--url", url, "-c", str(concurrency),
               "-d", str(seconds), "--pid", str(pid), "--store", "true"]  # fmt: skip
    if stream:
        command.append("--stream")
    output = subprocess.run(command, capture_output=True, text=True, check=True).stdout
    return json.loads(next(line for line in output.splitlines() if line.startswith("{")))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rig", type=Path, default=Path(__file__).resolve().parents[2] / "shared" / "bench")
    parser.add_argument("--rig-python", default=sys.executable, help="a Python with aiohttp, uvloop, httptools, orjson")
    parser.add_argument("--seconds", type=float, default=15)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--concurrency", type=int, nargs="+", default=[1, 16, 64])
    args = parser.parse_args()
    mock_port = free_port()
    mock = subprocess.Popen(["taskset", "-c", "0", args.rig_python, str(args.rig / "mock_upstream.py"),
                             "--port", str(mock_port), "--tokens", "64"], stdout=subprocess.DEVNULL)  # fmt: skip
    try:
        with tempfile.TemporaryDirectory() as tmp:
            db = f"sqlite:///{Path(tmp) / 'rig.db'}"
            upstream = f"http://127.0.0.1:{mock_port}/v1"
            pids: list[int] = []
            with responsa_server(
                "--db", db, "--no-embedded", "--no-simulator", "--upstream", upstream, pin=1, pids=pids
            ) as url:
                pid = pids[0]
                print(f"{'mode':<7} | {'c':>3} | {'req/s':>8} | {'p50 ms':>8} | {'RSS MB':>7} | errors")
                print("-" * 56)
                for stream in (False, True):
                    for concurrency in args.concurrency:
                        runs = [load_once(args.rig, args.rig_python, url, pid, stream, concurrency, args.seconds)
                                for _ in range(args.repeat)]  # fmt: skip
                        rps = statistics.median(run["rps"] for run in runs)
                        p50 = statistics.median(run["lat_p50_ms"] for run in runs)
                        rss = max(run.get("server_rss_peak_mb") or 0 for run in runs)
                        errors = sum(run["errors"] for run in runs)
                        mode = "stream" if stream else "json"
                        print(f"{mode:<7} | {concurrency:>3} | {rps:>8.1f} | {p50:>8.2f} | {rss:>7.0f} | {errors}")
    finally:
        mock.terminate()
        mock.wait(10)
    print(f"\nmedians of {args.repeat} x {args.seconds:g}s, 64 tokens, store on; {os.cpu_count()} cores")


if __name__ == "__main__":
    main()
