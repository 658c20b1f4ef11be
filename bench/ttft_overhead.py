"""Time to first token added by responsa: the rig's mock (100 ms to first token, 20 ms per token)
streamed straight, through the barest Python hop (bench/bare_hop.py: the floor) and through responsa,
at concurrency 1, interleaved.

Runs the rig's load.py against the mock's Chat Completions API, against the bare hop and against
responsa's Responses API (SQLite store on; responsa and the hop pinned to core 1) in turns,
--repeat times, and prints the median TTFT of each and what each hop adds.

    python bench/ttft_overhead.py --rig-python /tmp/rig/bin/python [--seconds 10] [--repeat 3]
"""

from __future__ import annotations

import argparse
import statistics
from dataclasses import dataclass
from pathlib import Path

from _server import bare_hop, responsa_on_rig, rig_arguments, rig_load


@dataclass(frozen=True)
class TtftRuns:
    """TTFT p50 (ms) of each run of each path."""

    direct: list[float]
    bare: list[float]
    through: list[float]

    @property
    def added(self) -> float:
        """What responsa adds to the mock's own TTFT (medians)."""
        return statistics.median(self.through) - statistics.median(self.direct)

    @property
    def floor(self) -> float:
        """What the bare hop adds: the least any Python gateway would."""
        return statistics.median(self.bare) - statistics.median(self.direct)


def measure(rig_python: str, rig: Path, seconds: float, repeat: int) -> TtftRuns:
    """TTFT p50 (ms) of each run: straight to the mock, through the bare hop and through responsa, in turns."""
    timing = ["--ttft-ms", "100", "--delay-ms", "20", "--tokens", "16"]
    flags = ["--stream", "-c", "1", "-d", str(seconds), "--max-output-tokens", "16"]
    with responsa_on_rig(rig_python, *timing, rig=rig) as (url, upstream), bare_hop(rig_python, upstream) as hop:
        runs = TtftRuns([], [], [])
        for _ in range(repeat):
            base = upstream.removesuffix("/v1")
            runs.direct.append(rig_load(rig_python, base, "--api", "chat", *flags, rig=rig)["ttft_p50_ms"])
            runs.bare.append(rig_load(rig_python, hop, *flags, rig=rig)["ttft_p50_ms"])
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
    paths = (("mock alone", runs.direct), ("through a bare hop", runs.bare), ("through responsa", runs.through))
    for path, times in paths:
        print(f"{path:<22} | {statistics.median(times):>28.2f} | {', '.join(f'{t:.2f}' for t in times)}")
    print(f"\nadded by the bare hop (the floor): {runs.floor:+.2f} ms at p50")
    print(f"added by responsa: {runs.added:+.2f} ms at p50 (c=1, mock 100 ms to first token, 20 ms per token)")


if __name__ == "__main__":
    main()
