"""responsa's throughput with 1, 2, ... ``--workers`` in front of the rig's mock, in one run.

Nothing is pinned: the workers, the mock and the load generator share the machine's cores, so on a
machine of C cores C workers cannot reach C times one worker's rate (the mock and load.py take their
share). Rounds alternate the worker counts (a fresh server and store each time) so that the machine's
drift falls on all of them alike. For each count and mode it prints the median req/s, its ratio to the
first count's, p50 latency, errors, and the peak RSS of each worker and of all of them; then the mock
alone at the same concurrency, the yardstick. Store on (SQLite), 64 tokens.

It also prints where the CPU went, per request served: the server's processes (``server µs``) and
the rig's (load.py and the mock, ``rig µs``), each from /proc over the run. From them, ``ceiling``:
the rate these cores allow if every request cost the server what it cost with the first count
(``min(N / server₁, cores / (server₁ + rig))``), and its ratio to the first count's rate. Where the
measured ratio meets the ceiling's, the workers scale as far as the rig's share of the cores lets
them; where it falls short, the gap is the workers' own (more CPU per request, or waiting).

    python bench/workers_scaling.py --rig ../shared/bench --rig-python /tmp/rig/bin/python \\
        [--workers 1 2] [--seconds 15] [--rounds 3] [--concurrency 64] [--plot scaling.png]
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
from collections import defaultdict
from pathlib import Path
from typing import Any

from _server import mock_alone_rps, responsa_server, rig_arguments, rig_load, rig_mock

MODES = ("json", "stream")


def worker_peaks(parent: int) -> list[float]:
    """The peak RSS (MB) of each worker process the server at ``parent`` runs."""
    peaks = []
    for child in Path(f"/proc/{parent}/task/{parent}/children").read_text().split():
        command = Path(f"/proc/{child}/cmdline").read_bytes()
        if b"resource_tracker" in command:
            continue
        peaks.append(peak_rss(int(child)))
    return peaks


def one_round(args: argparse.Namespace, upstream: str, mock: int, workers: int, tmp: str) -> dict[str, dict[str, Any]]:
    """One server with ``workers`` workers, each mode once; what load.py said, with the workers' peaks
    and the CPU time per request of the server and of the rig (load.py and the ``mock`` process)."""
    pids: list[int] = []
    flags = ("--db", f"sqlite:///{tmp}/w{workers}.db", "--no-embedded", "--no-simulator", "--upstream", upstream)
    results = {}
    with responsa_server(*flags, "--workers", str(workers), pin=None, pids=pids) as url:
        for mode in MODES:
            load = ["-c", str(args.concurrency), "-d", str(args.seconds), "--store", "true"]
            load += ["--pid", str(pids[0]), "--aux-pid", str(mock)]
            result = results[mode] = rig_load(args.rig_python, url, *load, *(["--stream"] * (mode == "stream")),
                                              rig=args.rig, pin=None)  # fmt: skip
            served = max(result["ok"], 1)
            result["server_us"] = result["server_cpu_s"] / served * 1e6
            result["rig_us"] = (result["loadgen_cpu_s"] + sum(result["aux_cpu_s"].values())) / served * 1e6
            peaks = worker_peaks(pids[0]) if workers > 1 else [peak_rss(pids[0])]
            results[mode]["worker_peaks_mb"] = peaks
    return results


def peak_rss(pid: int) -> float:
    """A process's peak RSS, MB."""
    status = Path(f"/proc/{pid}/status").read_text()
    return int(next(line for line in status.splitlines() if line.startswith("VmHWM")).split()[1]) / 1024


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    rig_arguments(parser)
    parser.add_argument("--workers", type=int, nargs="+", default=[1, 2])
    parser.add_argument("--seconds", type=float, default=15)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--concurrency", type=int, default=64)
    parser.add_argument("--plot", type=Path, default=None, help="a PNG of req/s against workers")
    args = parser.parse_args()
    runs: dict[tuple[int, str], list[dict[str, Any]]] = defaultdict(list)
    mock: list[int] = []
    with tempfile.TemporaryDirectory() as tmp, rig_mock(args.rig_python, "--tokens", "64", rig=args.rig,
                                                        pin=None, pids=mock) as upstream:  # fmt: skip
        for _ in range(args.rounds):
            for workers in args.workers:
                for mode, result in one_round(args, upstream, mock[0], workers, tmp).items():
                    runs[workers, mode].append(result)
        alone = {mode: mock_alone_rps(args.rig_python, upstream, mode, args.concurrency, args.seconds, rig=args.rig)
                 for mode in MODES}  # fmt: skip
    print(f"{'mode':<7}{'workers':>8}{'req/s':>9}{'ratio':>7}{'p50 ms':>8}{'errors':>8}{'RSS/worker MB':>15}"
          f"{'RSS MB':>8}{'server µs':>11}{'rig µs':>8}{'ceiling':>9}{'ratio':>7}")  # fmt: skip
    medians: dict[tuple[int, str], float] = {}
    cores = len(os.sched_getaffinity(0))
    for mode in MODES:
        first = args.workers[0]
        one = statistics.median(run["server_us"] for run in runs[first, mode])
        for workers in args.workers:
            found = runs[workers, mode]
            medians[workers, mode] = rps = statistics.median(run["rps"] for run in found)
            ratio = rps / medians[first, mode]
            p50 = statistics.median(run["lat_p50_ms"] for run in found)
            errors = sum(run["errors"] for run in found)
            peaks = max((run["worker_peaks_mb"] for run in found), key=sum)
            server, rig = (statistics.median(run[key] for run in found) for key in ("server_us", "rig_us"))
            ceiling = min(workers / first * medians[first, mode], cores / (one + rig) * 1e6)
            print(f"{mode:<7}{workers:>8}{rps:>9.0f}{ratio:>7.2f}{p50:>8.1f}{errors:>8}{max(peaks):>15.0f}"
                  f"{sum(peaks):>8.0f}{server:>11.0f}{rig:>8.0f}{ceiling:>9.0f}"
                  f"{ceiling / medians[first, mode]:>7.2f}")  # fmt: skip
        print(f"{mode:<7}{'mock':>8}{alone[mode]:>9.0f}  (the mock alone, same concurrency)")
    if args.plot:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        figure, axes = plt.subplots(figsize=(6, 4))
        for mode in MODES:
            axes.plot(args.workers, [medians[w, mode] for w in args.workers], marker="o", label=mode)
        axes.set_xlabel("workers")
        axes.set_ylabel("requests / s")
        axes.set_xticks(args.workers)
        axes.legend()
        figure.tight_layout()
        figure.savefig(args.plot)


if __name__ == "__main__":
    main()
