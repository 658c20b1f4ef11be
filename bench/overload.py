"""Overload: N clients (1,000 by default) each streaming back to back for S seconds against the
simulator, sent by the shared rig's load generator (load.py, pinned to core 0) on the same machine as
the server; a refused client retries at once (no backoff: harsher than a real client, which waits
``retry-after``).

Compares the line without a deadline (``--max-queue-wait-secs`` huge: a request waits in line as
long as it takes) with the server's defaults (a request that gets no slot within 2 s is refused).
Prints, for each, the streams served and refused (429), time to first byte (response headers: sent
once a stream is admitted) and to first token p50/p99 of the served ones, and the server's peak RSS.

    python bench/overload.py --rig ../shared/bench --rig-python /tmp/rig/bin/python
"""

from __future__ import annotations

import argparse
import tempfile
from pathlib import Path

from _server import responsa_server, rig_arguments, rig_load


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    rig_arguments(parser)
    parser.add_argument("--clients", type=int, default=1000, help="concurrent streaming clients")
    parser.add_argument("--seconds", type=float, default=20.0, help="how long they stream")
    parser.add_argument("--token-delay-ms", type=float, default=0.0, help="the simulator's pause per token")
    args = parser.parse_args()
    print(f"{args.clients} clients streaming for {args.seconds:g} s, simulator at {args.token_delay_ms:g} ms a "
          f"token, store on (SQLite file)")  # fmt: skip
    print("line           | served | refused | TTFB p50 | TTFB p99 | TTFT p50 | TTFT p99 | RSS MB")
    for label, wait in (("no deadline", "100000"), ("default (2 s)", None)):
        directory = tempfile.TemporaryDirectory()
        flags = ["--no-embedded", "--sim-token-delay-ms", str(args.token_delay_ms),
                 "--db", f"sqlite:///{Path(directory.name) / 'overload.db'}"]  # fmt: skip
        if wait is not None:
            flags += ["--max-queue-wait-secs", wait]
        pids: list[int] = []
        with directory, responsa_server(*flags, pids=pids) as url:
            load = ["--model", "sim", "--stream", "-c", str(args.clients), "-d", str(args.seconds), "--warmup", "0",
                    "--pid", str(pids[0]), "--timeout", "120"]  # fmt: skip
            summary = rig_load(args.rig_python, url, *load, rig=args.rig)
        refused = summary["error_kinds"].get("http_429", 0)
        others = summary["errors"] - refused
        figures = [summary[key] for key in ("ttfb_p50_ms", "ttfb_p99_ms", "ttft_p50_ms", "ttft_p99_ms")]
        cells = " | ".join(f"{value / 1000:>8.2f}" if value is not None else "       -" for value in figures)
        note = f"  ({others} other errors: {summary['error_kinds']})" if others else ""
        rss = summary.get("server_rss_peak_mb") or 0
        print(f"{label:<14} | {summary['ok']:>6} | {refused:>7} | {cells} | {rss:>6.0f}{note}")
    print("(seconds; TTFB: response headers, TTFT: first output_text.delta, of the served streams)")


if __name__ == "__main__":
    main()
