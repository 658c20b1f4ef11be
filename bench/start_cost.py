"""What one ``responsa serve`` start costs: ``--starts`` processes, one after another, each on a new
SQLite file (so each runs the migration) with the given serve options; for each, the seconds until
``/health`` answers and the CPU it and its children (the migration's process, the probes'
interpreters, a sandbox) spent from its start to its exit after SIGTERM. Prints each start and the
medians. A start is the price of every ``--workers`` worker, replica and restart, and of the test
suite's process tests.

    python bench/start_cost.py [--starts 5] [-- --no-embedded --no-code-interpreter]
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import sys
import tempfile
import time
from pathlib import Path

from _server import free_port, running


def _children_cpu() -> float:
    used = resource.getrusage(resource.RUSAGE_CHILDREN)
    return used.ru_utime + used.ru_stime


def one_start(options: list[str]) -> tuple[float, float]:
    """(seconds until it answered, CPU seconds it and its children spent) for one start."""
    with tempfile.TemporaryDirectory() as directory:
        port = free_port()
        command = [sys.executable, "-m", "responsa.cli", "serve", "--port", str(port), "--log-level", "warning",
                   "--db", f"sqlite:///{Path(directory) / 'r.db'}", *options]  # fmt: skip
        before, began = _children_cpu(), time.monotonic()
        with running(command, f"http://127.0.0.1:{port}/health", wait=120):  # SIGTERM and waited for at the end
            answered = time.monotonic() - began
        return answered, _children_cpu() - before


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--starts", type=int, default=5)
    parser.add_argument("options", nargs="*", help="serve's options (after --)")
    args = parser.parse_args()
    runs = [one_start(args.options) for _ in range(args.starts)]
    for index, (answered, cpu) in enumerate(runs, 1):
        print(f"start {index}: answered after {answered:.2f} s, {cpu:.2f} s of CPU")
    print(f"median: answered after {statistics.median(r[0] for r in runs):.2f} s, "
          f"{statistics.median(r[1] for r in runs):.2f} s of CPU ({os.cpu_count()} cores)")  # fmt: skip


if __name__ == "__main__":
    main()
