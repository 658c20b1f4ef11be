"""Crash figures: a real ``responsa serve`` loaded by 24 clients (``--clients``) (JSON, streamed, streamed in the
background; all stored) is SIGKILLed and restarted on the same store, ROUNDS times, on SQLite and on
PostgreSQL (the drill of tests/test_crash.py, run longer). Prints, per store, what the clients saw
acknowledged, and of it how much was lost or changed after the restarts, how many responses stayed
queued or in progress past their lease (stuck), how many responses' status column and body
disagreed after the recovery (tests/crash_drill.py DISAGREEING), and what the database's integrity
checks found. With ``--workers N`` the server runs N workers and the whole process tree is killed.

    python bench/crash.py --rounds 10 --seconds 5 [--workers 2] [--clients 32 --token-delay-ms 0]
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


def _drill(kind: str, rounds: int, load: Load, workers: int) -> None:
    with tempfile.TemporaryDirectory() as directory, fresh_store(kind, Path(directory)) as db_url:
        seen, lost, changed, stuck, disagreeing, problems = Seen(), 0, 0, 0, 0, 0
        log = Path(directory) / "serve.log"
        with closing(drill(db_url, log, seen, rounds, load, LEASE_SECONDS, workers)) as kills:
            for after_kill in kills:
                lost, changed = len(after_kill.damage.lost), len(after_kill.damage.changed)  # each round checks all
                stuck = max(stuck, after_kill.stuck)
                disagreeing = max(disagreeing, after_kill.disagreeing)
                problems += len(after_kill.problems)
        acknowledged = len(seen.ended.keys() | seen.queued)
        print(f"{kind:10} | {rounds:6} | {seen.requests:8} | {acknowledged:12} | {seen.ended_in_background():10} | "
              f"{lost:4} | {changed:7} | {stuck:5} | {disagreeing:8} | {problems:9}")  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=10, help="kills per store")
    parser.add_argument("--seconds", type=float, default=5.0, help="load before each kill")
    parser.add_argument("--clients", type=int, default=24, help="clients making responses at once")
    parser.add_argument("--token-delay-ms", type=int, default=2, help="the simulator's pace")
    parser.add_argument("--workers", type=int, default=1, help="worker processes of the server")
    parser.add_argument("--stores", nargs="+", default=["sqlite", "postgresql"], choices=["sqlite", "postgresql"])
    args = parser.parse_args()
    load = Load(args.clients, args.seconds, args.seconds + 20, token_delay_ms=args.token_delay_ms)
    print(
        f"kill -9 every {args.seconds:g} s under {args.clients} clients, {args.rounds} rounds per store, "
        f"lease {LEASE_SECONDS:g} s, {args.workers} worker(s), simulator at {args.token_delay_ms} ms a token"
    )
    print("store      | rounds | requests | acknowledged | background | lost | changed | stuck | disagree | integrity")
    for kind in args.stores:
        _drill(kind, args.rounds, load, args.workers)


if __name__ == "__main__":
    main()
