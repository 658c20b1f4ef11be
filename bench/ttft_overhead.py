"""Time to first token added by responsa: the rig's mock (100 ms to first token, 20 ms per token)
streamed straight, through the leanest Python gateway (bench/lean_gateway.py: the floor) and through
responsa, at concurrency 1, interleaved.

Runs the rig's load.py against the mock's Chat Completions API, against the lean gateway and against
responsa's Responses API (SQLite store on; responsa and the lean gateway pinned to core 1) in turns,
--repeat times, and prints the median TTFT of each and what each gateway adds.

    python bench/ttft_overhead.py --rig-python /tmp/rig/bin/python [--seconds 10] [--repeat 3]
"""

from __future__ import annotations

import argparse
import statistics
from dataclasses import dataclass
from pathlib import Path

from _server import lean_gateway, responsa_on_rig, rig_arguments, rig_load


@dataclass(frozen=True)
class TtftRuns:
    """TTFT p50 (ms) of each run of each path."""

    direct: list[float]
    lean: list[float]
    through: list[float]

    @property
    def added(self) -> float:
        """What responsa adds to the mock's own TTFT (medians)."""
        return statistics.median(self.through) - statistics.median(self.direct)

    @property
    def floor(self) -> float:
        """What the lean gateway adds: about the least any Python gateway would."""
        return statistics.median(self.lean) - statistics.median(self.direct)


def measure(rig_python: str, rig: Path, seconds: float, repeat: int) -> TtftRuns:
    """TTFT p50 (ms) of each run: straight to the mock, through the lean gateway and through responsa, in turns."""
    timing = ["--ttft-ms", "100", "--delay-ms", "20", "--tokens", "16"]
    flags = ["--stream", "-c", "1", "-d", str(seconds), "--max-output-tokens", "16"]
    with responsa_on_rig(rig_python, *timing, rig=rig) as (url, upstream), lean_gateway(upstream) as (lean, _):
        runs = TtftRuns([], [], [])
        for _ in range(repeat):
            base = upstream.removesuffix("/v1")
            runs.direct.append(rig_load(rig_python, base, "--api", "chat", *flags, rig=rig)["ttft_p50_ms"])
            runs.lean.append(rig_load(rig_python, lean, "--store", "true", *flags, rig=rig)["ttft_p50_ms"])
            runs.through.append(rig_load(rig_python, url, "--store", "true", *flags, rig=rig)["ttft_p50_ms"])
    return runs


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    rig_arguments(parser)
    parser.add_argument("--seconds", type=float, default=10)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    runs = measure(args.rig_python, args.rig, args.seconds, args.repeat)
    print(f"{'path':<22} | {'TTFT p50 ms (median of runs)':>28} | runs")
    print("-" * 66)
    paths = (("mock alone", runs.direct), ("through a lean gateway", runs.lean), ("through responsa", runs.through))
    for path, times in paths:
        print(f"{path:<22} | {statistics.median(times):>28.2f} | {', '.join(f'{t:.2f}' for t in times)}")
    print(f"\nadded by the lean gateway (the floor): {runs.floor:+.2f} ms at p50")
    print(f"added by responsa: {runs.added:+.2f} ms at p50 (c=1, mock 100 ms to first token, 20 ms per token)")


if __name__ == "__main__":
    main()
