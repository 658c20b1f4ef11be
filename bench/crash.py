"""Crash figures: a real ``responsa serve`` loaded by 24 clients (JSON, streamed, streamed in the
background; all stored) is SIGKILLed and restarted on the same store, ROUNDS times, on SQLite and on
PostgreSQL (the drill of tests/test_crash.py, run longer). Prints, per store, what the clients saw
acknowledged, and of it how much was lost or changed after the restarts, how many responses stayed
queued or in progress past their lease (stuck), and what the database's integrity checks found.

    python bench/crash.py --rounds 10 --seconds 5
"""

from __future__ import annotations

import argparse
import signal
import sys
import tempfile
from pathlib import Path

import anyio

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the drill lives with the tests

from tests.conftest import fresh_store
from tests.crash_drill import Load, Seen, find_damage, integrity_problems, load_until_killed, serve, stuck_after

LEASE_SECONDS = 1.0


def _drill(kind: str, rounds: int, load: Load) -> None:
    with tempfile.TemporaryDirectory() as directory, fresh_store(kind, Path(directory)) as db_url:
        seen, lost, changed, stuck, problems = Seen(), 0, 0, 0, 0
        process, url = serve(db_url, Path(directory) / "serve.log", LEASE_SECONDS)
        try:
            for _ in range(rounds):
                anyio.run(load_until_killed, url, process, seen, load)
                assert process.returncode == -signal.SIGKILL
                process, url = serve(db_url, Path(directory) / "serve.log", LEASE_SECONDS)
                damage = anyio.run(find_damage, url, seen)
                lost, changed = len(damage.lost), len(damage.changed)  # cumulative: every round checks all
                stuck = stuck_after(db_url, 4 * LEASE_SECONDS + 10)
                problems += len(integrity_problems(db_url))
        finally:
            process.terminate()
            process.wait(timeout=30)
        acknowledged = len(seen.ended.keys() | seen.queued)
        print(f"{kind:10} | {rounds:6} | {seen.requests:8} | {acknowledged:12} | {seen.ended_in_background():10} | "
              f"{lost:4} | {changed:7} | {stuck:5} | {problems:9}")  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=10, help="kills per store")
    parser.add_argument("--seconds", type=float, default=5.0, help="load before each kill")
    parser.add_argument("--stores", nargs="+", default=["sqlite", "postgresql"], choices=["sqlite", "postgresql"])
    args = parser.parse_args()
    load = Load(clients=24, seconds=args.seconds, max_seconds=args.seconds + 20)
    print(
        f"kill -9 every {args.seconds:g} s under 24 clients, {args.rounds} rounds per store, lease {LEASE_SECONDS:g} s"
    )
    print("store      | rounds | requests | acknowledged | background | lost | changed | stuck | integrity")
    for kind in args.stores:
        _drill(kind, args.rounds, load)


if __name__ == "__main__":
    main()
