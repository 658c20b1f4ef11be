"""Overload: N streams started at once against the simulator (N = 10 x CAP by default), with no cap
and with ``--max-generations CAP``, sent by the shared rig's load generator (load.py, one request per
client) on the same machine as the server.

Prints, for each setting, how many streams were served and refused (429), time to first byte
(response headers: sent once a stream is admitted) and time to first token p50/p99 of the served
ones, and the wall time. Without a cap every stream is accepted and time to first token grows with
the crowd; with it, the streams past the line learn at once that they should come back
(``retry-after``), and the served ones keep their pace.

    python bench/overload.py --rig ../shared/bench --rig-python /tmp/rig/bin/python --cap 100
"""

from __future__ import annotations

import argparse

from _server import responsa_server, rig_arguments, rig_load


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    rig_arguments(parser)
    parser.add_argument("--cap", type=int, default=100, help="--max-generations for the capped run")
    parser.add_argument("--streams", type=int, help="streams started at once (default: 10 x cap)")
    parser.add_argument("--token-delay-ms", type=float, default=5.0, help="the simulator's pause per token")
    args = parser.parse_args()
    streams = args.streams or 10 * args.cap
    print(f"{streams} streams at once, simulator at {args.token_delay_ms} ms a token, store on (SQLite in memory)")
    print("setting     | served | refused | TTFB p50 | TTFB p99 | TTFT p50 | TTFT p99 | wall s")
    for label, cap in (("no cap", 1_000_000), (f"cap {args.cap}", args.cap)):
        flags = ["--no-embedded", "--no-sim-latency", "--sim-token-delay-ms", str(args.token_delay_ms),
                 "--max-generations", str(cap), "--db", "sqlite:///:memory:"]  # fmt: skip
        with responsa_server(*flags) as url:
            load = ["--model", "sim", "--stream", "-c", str(streams), "-n", str(streams), "--max-seconds", "300"]
            summary = rig_load(args.rig_python, url, *load, rig=args.rig)
        refused = summary["error_kinds"].get("http_429", 0)
        others = summary["errors"] - refused
        figures = [summary[key] for key in ("ttfb_p50_ms", "ttfb_p99_ms", "ttft_p50_ms", "ttft_p99_ms")]
        cells = " | ".join(f"{value / 1000:>8.2f}" if value is not None else "       -" for value in figures)
        note = f"  ({others} other errors: {summary['error_kinds']})" if others else ""
        print(f"{label:<11} | {summary['ok']:>6} | {refused:>7} | {cells} | {summary['elapsed_s']:>6.1f}{note}")
    print("(seconds; TTFB: response headers, TTFT: first output_text.delta, of the served streams)")


if __name__ == "__main__":
    main()
