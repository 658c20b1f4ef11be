"""responsa's throughput with 1, 2, ... ``--workers`` in front of the rig's mock, in one run.

Nothing is pinned: the workers, the mock and the load generator share the machine's cores, so on a
machine of C cores C workers cannot reach C times one worker's rate (the mock and load.py take their
share). Rounds alternate the worker counts (a fresh server and store each time) so that the machine's
drift falls on all of them alike. For each count and mode it prints the median req/s, its ratio to the
first count's, p50 latency, errors, and the peak RSS of each worker and of all of them; then the mock
alone at the same concurrency, the yardstick. Store on, 64 tokens: a SQLite file the workers share, or
with ``--store postgresql`` a new PostgreSQL database each round (``--postgres``, the server's admin URL),
whose server processes' CPU counts as the store's (``store µs``).

It also prints where the CPU went, per request served: the server's processes (``server µs``) and
the rig's (load.py and the mock, ``rig µs``), each from /proc over the run. From them, ``ceiling``:
the rate these cores allow if every request cost the server what it cost with the first count
(``min(rate₁ * N / N₁, cores / (server₁ + store₁ + rig))``), its ratio to the first count's rate, and
``of ceiling``, the rate measured over the ceiling (each round's own, their median). Where it is 1, the
workers scale as far as the rig's share of the cores lets them; where it falls short, the gap is the
workers' own (more CPU per request, or waiting).

One load.py and one mock each drive one core. On a machine with many cores, ``--rig-processes K``
runs K mocks (responsa balances the model over them, as over several ``--upstream`` workers) and K
load.py at once, the concurrency split between them; their requests are summed (p50: the median of
theirs).

    python bench/workers_scaling.py --rig ../shared/bench --rig-python /tmp/rig/bin/python \\
        [--workers 1 2] [--seconds 15] [--rounds 3] [--concurrency 64] [--rig-processes 1] [--plot scaling.png]
        [--store postgresql --postgres postgresql://postgres@127.0.0.1:5432/postgres]
"""

from __future__ import annotations

import argparse
import os
import secrets
import statistics
import tempfile
from collections import defaultdict
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from functools import partial
from pathlib import Path
from typing import Any

from _server import cpu_seconds, responsa_server, rig_arguments, rig_loads, rig_mock

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


@contextmanager
def store_url(args: argparse.Namespace, tmp: str, name: str) -> Iterator[str]:
    """A new, empty store for one round: a SQLite file in ``tmp``, or a PostgreSQL database (dropped after)."""
    if args.store == "sqlite":
        yield f"sqlite:///{tmp}/{name}.db"
        return
    import asyncpg
    from anyio import run

    database = f"responsa_bench_{secrets.token_hex(4)}"

    async def admin(statement: str) -> None:
        connection = await asyncpg.connect(args.postgres)
        try:
            await connection.execute(statement)
        finally:
            await connection.close()

    run(admin, f"CREATE DATABASE {database}")
    try:
        yield args.postgres.rsplit("/", 1)[0] + f"/{database}"
    finally:
        run(admin, f"DROP DATABASE {database} WITH (FORCE)")


def postgres_cpu_seconds() -> float:
    """The CPU seconds of every PostgreSQL server process now running (its backends and helpers)."""
    total = 0.0
    for entry in Path("/proc").iterdir():
        try:
            if entry.name.isdigit() and (entry / "comm").read_text().startswith("postgres"):
                total += cpu_seconds(int(entry.name))
        except OSError:  # gone meanwhile
            continue
    return total


def one_round(
    args: argparse.Namespace, upstreams: list[str], mocks: list[int], workers: int, tmp: str
) -> dict[str, dict[str, Any]]:
    """One server with ``workers`` workers, each mode once; what load.py said, with the workers' peaks
    and the CPU time per request of the server, of its store's processes (PostgreSQL's) and of the rig
    (load.py and the ``mocks`` processes)."""
    pids: list[int] = []
    results = {}
    with ExitStack() as stack:
        flags = ["--db", stack.enter_context(store_url(args, tmp, f"w{workers}")), "--no-embedded", "--no-simulator"]
        for upstream in upstreams:
            flags += ["--upstream", upstream]
        url = stack.enter_context(responsa_server(*flags, "--workers", str(workers), pin=None, pids=pids))
        for mode in MODES:
            share = max(args.concurrency // args.rig_processes, 1)
            load = ["-c", str(share), "-d", str(args.seconds), "--store", "true", *(["--stream"] * (mode == "stream"))]
            watch = ("--pid", str(pids[0]), *(flag for mock in mocks for flag in ("--aux-pid", str(mock))))
            store_before = postgres_cpu_seconds() if args.store == "postgresql" else 0.0
            found = rig_loads(args.rig_python, [url] * args.rig_processes, *load, rig=args.rig, first=watch)
            store_spent = postgres_cpu_seconds() - store_before if args.store == "postgresql" else 0.0
            result = results[mode] = merged(found)
            result["store_us"] = store_spent / max(sum(each["ok"] for each in found), 1) * 1e6
            result["worker_peaks_mb"] = worker_peaks(pids[0]) if workers > 1 else [peak_rss(pids[0])]
    return results


def merged(found: list[dict[str, Any]]) -> dict[str, Any]:
    """Several load.py summaries of one run as one: requests summed, p50 the median of theirs, the server's
    and the mocks' CPU as the first (which watched them) saw it, every load.py's own added."""
    served = max(sum(each["ok"] for each in found), 1)
    rig_cpu = sum(each["loadgen_cpu_s"] for each in found) + sum(found[0]["aux_cpu_s"].values())
    return {
        "rps": sum(each["rps"] for each in found),
        "errors": sum(each["errors"] for each in found),
        "lat_p50_ms": statistics.median(each["lat_p50_ms"] for each in found),
        "server_us": found[0]["server_cpu_s"] / served * 1e6,
        "rig_us": rig_cpu / served * 1e6,
    }


def mocks_alone_rps(args: argparse.Namespace, upstreams: list[str], mode: str) -> float:
    """The rig's mocks driven straight by load.py, one each: the yardstick's req/s."""
    flags = ["--api", "chat", "-c", str(max(args.concurrency // len(upstreams), 1)), "-d", str(args.seconds)]
    urls = [upstream.removesuffix("/v1") for upstream in upstreams]
    flags += ["--stream"] * (mode == "stream")
    return float(sum(each["rps"] for each in rig_loads(args.rig_python, urls, *flags, rig=args.rig)))


def round_ceiling(run: dict[str, Any], base: dict[str, Any], scale: float, cores: int) -> float:
    """The ceiling of one round: ``scale`` times the first count's rate, or what the cores allow at the
    first count's server and store CPU per request and this round's rig's."""
    return min(scale * base["rps"], cores * 1e6 / (base["server_us"] + base["store_us"] + run["rig_us"]))


def median_of(runs: list[dict[str, Any]], key: str) -> float:
    return statistics.median(run[key] for run in runs)


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
    parser.add_argument("--rig-processes", type=int, default=1, help="mocks and load.py processes (one core each)")
    parser.add_argument("--plot", type=Path, default=None, help="a PNG of req/s against workers")
    parser.add_argument("--store", choices=("sqlite", "postgresql"), default="sqlite")
    parser.add_argument("--postgres", default="postgresql://postgres@127.0.0.1:5432/postgres", help="admin URL")
    args = parser.parse_args()
    runs: dict[tuple[int, str], list[dict[str, Any]]] = defaultdict(list)
    mocks: list[int] = []
    with tempfile.TemporaryDirectory() as tmp, ExitStack() as stack:
        mock = partial(rig_mock, args.rig_python, "--tokens", "64", rig=args.rig, pin=None, pids=mocks)
        upstreams = [stack.enter_context(mock()) for _ in range(args.rig_processes)]
        for _ in range(args.rounds):
            for workers in args.workers:
                for mode, result in one_round(args, upstreams, mocks, workers, tmp).items():
                    runs[workers, mode].append(result)
        alone = {mode: mocks_alone_rps(args, upstreams, mode) for mode in MODES}
    print(f"{'mode':<7}{'workers':>8}{'req/s':>9}{'ratio':>7}{'p50 ms':>8}{'errors':>8}{'RSS/worker MB':>15}"
          f"{'RSS MB':>8}{'server µs':>11}{'store µs':>10}{'rig µs':>8}{'ceiling':>9}{'ratio':>7}"
          f"{'of ceiling':>12}")  # fmt: skip
    medians: dict[tuple[int, str], float] = {}
    cores = len(os.sched_getaffinity(0))
    for mode in MODES:
        first = args.workers[0]
        ones = runs[first, mode]
        one = statistics.median(run["server_us"] + run["store_us"] for run in ones)
        for workers in args.workers:
            found = runs[workers, mode]
            medians[workers, mode] = rps = statistics.median(run["rps"] for run in found)
            ratio = rps / medians[first, mode]
            p50 = statistics.median(run["lat_p50_ms"] for run in found)
            errors = sum(run["errors"] for run in found)
            peaks = max((run["worker_peaks_mb"] for run in found), key=sum)
            server, store, rig = (median_of(found, key) for key in ("server_us", "store_us", "rig_us"))
            ceiling = min(workers / first * medians[first, mode], cores / (one + rig) * 1e6)
            of_ceiling = statistics.median(  # each round against the ceiling its first count's round sets
                run["rps"] / round_ceiling(run, base, workers / first, cores)
                for run, base in zip(found, ones, strict=True)
            )
            print(f"{mode:<7}{workers:>8}{rps:>9.0f}{ratio:>7.2f}{p50:>8.1f}{errors:>8}{max(peaks):>15.0f}"
                  f"{sum(peaks):>8.0f}{server:>11.0f}{store:>10.0f}{rig:>8.0f}{ceiling:>9.0f}"
                  f"{ceiling / medians[first, mode]:>7.2f}{of_ceiling:>12.2f}")  # fmt: skip
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
