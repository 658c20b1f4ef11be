"""Replicas started together on an empty store: ``--replicas`` ``responsa serve`` processes (each with
``--workers``) started at the same moment on a new database, ``--tries`` times; counts the starts that
failed (a process that exited, or did not answer within a minute) and the workers replaced while they
started ("Child process … died" in their logs).

    python bench/replica_starts.py [--replicas 2] [--workers 2] [--tries 20] [--store postgresql|sqlite]
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the helpers live with the tests

from tests.conftest import free_port, fresh_store


def one_try(kind: str, replicas: int, workers: int) -> tuple[int, int]:
    """(failed starts, workers replaced) for one start of ``replicas`` replicas together."""
    with tempfile.TemporaryDirectory() as directory, fresh_store(kind, Path(directory)) as db_url:
        logs = [Path(directory) / f"replica-{index}.log" for index in range(replicas)]
        ports = [free_port() for _ in range(replicas)]
        processes = []
        for port, log in zip(ports, logs, strict=True):
            command = [sys.executable, "-m", "responsa.cli", "serve", "--port", str(port), "--db", db_url,
                       "--no-embedded", "--workers", str(workers), "--secret-key", "shared-by-the-fleet"]  # fmt: skip
            with log.open("wb") as sink:
                processes.append(subprocess.Popen(command, stdout=sink, stderr=subprocess.STDOUT))
        failed = 0
        deadline = time.monotonic() + 60
        for port, process in zip(ports, processes, strict=True):
            while True:
                try:
                    httpx.get(f"http://127.0.0.1:{port}/health").raise_for_status()
                    break
                except httpx.HTTPError:
                    if process.poll() is not None or time.monotonic() > deadline:
                        failed += 1
                        break
                    time.sleep(0.1)
        for process in processes:
            process.terminate()
        for process in processes:
            process.wait(60)
        replaced = sum(log.read_text(errors="replace").count("died") for log in logs)
        return failed, replaced


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--replicas", type=int, default=2)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--tries", type=int, default=20)
    parser.add_argument("--store", default="postgresql", choices=["sqlite", "postgresql"])
    args = parser.parse_args()
    failed = replaced = 0
    for _ in range(args.tries):
        one_failed, one_replaced = one_try(args.store, args.replicas, args.workers)
        failed, replaced = failed + one_failed, replaced + one_replaced
    print(f"{args.replicas} replicas x {args.workers} workers on an empty {args.store} store, {args.tries} tries: "
          f"{failed} failed starts, {replaced} workers replaced while starting")  # fmt: skip


if __name__ == "__main__":
    main()
