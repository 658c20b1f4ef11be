"""Time to first token added by responsa: the rig's mock (100 ms to first token, 20 ms per token)
streamed straight and through responsa, at concurrency 1, interleaved.

Runs the rig's load.py against the mock's Chat Completions API and against responsa's Responses API
(SQLite store on, responsa pinned to core 1) in turns, --repeat times, and prints the median TTFT
of each and the difference.

    python bench/ttft_overhead.py --rig-python /tmp/rig/bin/python [--seconds 10] [--repeat 3]
"""

from __future__ import annotations

import argparse
import statistics
from pathlib import Path

from _server import responsa_on_rig, rig_arguments, rig_load


def measure(rig_python: str, rig: Path, seconds: float, repeat: int) -> tuple[list[float], list[float]]:
    """TTFT p50 (ms) of each run: straight to the mock, and through responsa, taking turns."""
    timing = ["--ttft-ms", "100", "--delay-ms", "20", "--tokens", "16"]
    flags = ["--stream", "-c", "1", "-d", str(seconds), "--max-output-tokens", "16"]
    with responsa_on_rig(rig_python, *timing, rig=rig) as (url, upstream):
        direct, through = [], []
        for _ in range(repeat):
            base = upstream.removesuffix("/v1")
            direct.append(rig_load(rig_python, base, "--api", "chat", *flags, rig=rig)["ttft_p50_ms"])
            through.append(rig_load(rig_python, url, "--store", "true", *flags, rig=rig)["ttft_p50_ms"])
    return direct, through


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    rig_arguments(parser)
    parser.add_argument("--seconds", type=float, default=10)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    direct, through = measure(args.rig_python, args.rig, args.seconds, args.repeat)
    mock, gateway = statistics.median(direct), statistics.median(through)
    print(f"{'path':<22} | {'TTFT p50 ms (median of runs)':>28} | runs")
    print("-" * 66)
    print(f"{'mock alone':<22} | {mock:>28.2f} | {', '.join(f'{t:.1f}' for t in direct)}")
    print(f"{'through responsa':<22} | {gateway:>28.2f} | {', '.join(f'{t:.1f}' for t in through)}")
    print(f"\nadded by responsa: {gateway - mock:+.2f} ms at p50 (c=1, mock 100 ms to first token, 20 ms per token)")


if __name__ == "__main__":
    main()
