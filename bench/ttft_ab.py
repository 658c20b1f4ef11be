"""Time to first token of two versions of responsa, for a before/after that this machine's drift
cannot fake: both servers run at once on core 1 (each from its own source tree), and the rig's
load.py (core 0) measures the mock alone and each of them in turn, round after round (c=1, the mock
100 ms to its first token, 4 tokens 2 ms apart: ~55 streams a run). Prints each one's median TTFT
p50, what it adds to the mock's own, and the per-round difference (after - before): the figure to
read, since the machine's own swings (0.2 ms between runs) move both alike within a round.

    python bench/ttft_ab.py --rig-python /tmp/rig/bin/python --before /tmp/before/src --after src [--rounds 10]
"""

from __future__ import annotations

import argparse
import statistics

from _server import ab_arguments, ab_pythons, responsa_trees, rig_load, rig_mock


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ab_arguments(parser)
    parser.add_argument("--rounds", type=int, default=10)
    parser.add_argument("--seconds", type=float, default=6)
    args = parser.parse_args()
    flags = ["--stream", "-c", "1", "-d", str(args.seconds), "--max-output-tokens", "4"]
    timing = ("--ttft-ms", "100", "--delay-ms", "2", "--tokens", "4")
    sources = {"before": args.before, "after": args.after}
    ttft: dict[str, list[float]] = {"mock alone": [], "before": [], "after": []}
    with (
        rig_mock(args.rig_python, *timing, rig=args.rig) as upstream,
        responsa_trees(upstream, sources, ab_pythons(args)) as servers,
    ):
        for round_number in range(args.rounds):
            base = upstream.removesuffix("/v1")
            ttft["mock alone"].append(
                rig_load(args.rig_python, base, "--api", "chat", *flags, rig=args.rig)["ttft_p50_ms"]
            )
            order = list(servers) if round_number % 2 == 0 else list(servers)[::-1]
            for name in order:
                url = servers[name][0]
                ttft[name].append(
                    rig_load(args.rig_python, url, "--store", "true", *flags, rig=args.rig)["ttft_p50_ms"]
                )
    mock = statistics.median(ttft["mock alone"])
    for name, runs in ttft.items():
        median = statistics.median(runs)
        listed = ", ".join(f"{t:.2f}" for t in runs)
        print(f"{name:<10} TTFT p50 {median:8.3f} ms, adds {median - mock:+.3f}  (runs: {listed})")
    differences = [after - before for before, after in zip(ttft["before"], ttft["after"], strict=True)]
    lower = sum(difference < 0 for difference in differences)
    change = statistics.median(differences)
    print(f"after - before: {change:+.3f} ms (median of {args.rounds} rounds; after lower in {lower})")


if __name__ == "__main__":
    main()
