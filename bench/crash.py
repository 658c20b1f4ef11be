"""Crash figures: a real ``responsa serve`` loaded by 24 clients (JSON, streamed, streamed in the
background; all stored) is SIGKILLed and restarted on the same store, ROUNDS times, on SQLite and on
PostgreSQL (the drill of tests/test_crash.py, run longer). Prints, per store, what the clients saw
acknowledged, and of it how much was lost or changed after the restarts, how many responses stayed
queued or in progress past their lease (stuck), and what the database's integrity checks found.

    python bench/crash.py --rounds 10 --seconds 5
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from contextlib import closing
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the drill lives with the tests

from tests.conftest import fresh_store
from tests.crash_drill import Load, Seen, drill

LEASE_SECONDS = 1.0


def _drill(kind: str, rounds: int, load: Load) -> None:
    with tempfile.TemporaryDirectory() as directory, fresh_store(kind, Path(directory)) as db_url:
        seen, lost, changed, stuck, problems = Seen(), 0, 0, 0, 0
        with closing(drill(db_url, Path(directory) / "serve.log", seen, rounds, load, LEASE_SECONDS)) as kills:
            for after_kill in kills:
                lost, changed = len(after_kill.damage.lost), len(after_kill.damage.changed)  # each round checks all
                stuck = after_kill.stuck
                problems += len(after_kill.problems)
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
