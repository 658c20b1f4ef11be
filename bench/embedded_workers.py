"""The embedded model behind ``--workers 2`` against one process: aggregate tokens/s and time to
first token of 4 concurrent streams (each on its own connection, so the kernel spreads them over the
workers), both servers up at once and measured in alternate rounds. With two workers the model runs
once, in the model process both reach; its slots decode the streams of both together. It also prints
the cores each server's processes used while streaming (from /proc): all of them, and the busiest
(the one process, or the model process).

    python bench/embedded_workers.py [--tokens 128] [--rounds 3]
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from contextlib import ExitStack
from pathlib import Path

from _server import cpu_seconds, process_tree, responsa_server
from embedded_parallel import PACKAGED, concurrent, sequential


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--tokens", type=int, default=128)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    results: dict[int, list[tuple[float, float]]] = {1: [], 2: []}
    used: dict[int, dict[int, float]] = {1: {}, 2: {}}
    """CPU seconds of each process of each server, summed over its rounds."""
    wall = dict.fromkeys(results, 0.0)
    with tempfile.TemporaryDirectory() as tmp, ExitStack() as stack:
        urls, pids = {}, {}
        for workers in results:
            db = f"sqlite:///{Path(tmp) / f'w{workers}.db'}"
            found_pids: list[int] = []
            flags = ("--db", db, "--no-simulator", "--parallel", "4", "--workers", str(workers))
            urls[workers] = stack.enter_context(responsa_server(*flags, pids=found_pids))
            pids[workers] = found_pids[0]
            sequential(urls[workers], PACKAGED, 1, 8)  # load the model
        for _ in range(args.rounds):
            for workers, url in urls.items():
                before = {pid: cpu_seconds(pid) for pid in process_tree(pids[workers])}
                started = time.perf_counter()
                results[workers].append(concurrent(url, PACKAGED, 4, args.tokens))
                wall[workers] += time.perf_counter() - started
                for pid, seconds in before.items():
                    used[workers][pid] = used[workers].get(pid, 0.0) + cpu_seconds(pid) - seconds
    for workers, found in results.items():
        speed = statistics.median(s for s, _t in found)
        ttft = statistics.median(t for _s, t in found)
        cores = sum(used[workers].values()) / wall[workers]
        busiest = max(used[workers].values()) / wall[workers]
        print(f"--workers {workers}: 4 concurrent streams {speed:.1f} tok/s, TTFT median {ttft:.0f} ms; "
              f"{cores:.2f} cores used, {busiest:.2f} by the busiest process")  # fmt: skip
    print(f"(medians of {args.rounds} rounds, {args.tokens} tokens a stream)")


if __name__ == "__main__":
    main()
