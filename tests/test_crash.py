"""Killed under load, nothing acknowledged is lost: a real ``responsa serve`` process serving 24
concurrent clients (JSON, streamed, streamed in the background; all stored) is SIGKILLed and
restarted on the same store, three times per store. After each restart every response a client saw
end (a JSON reply, or a terminal stream event) is retrievable and identical to what it saw, every
background response that was acknowledged as queued exists, nothing stays queued or in progress past
the lease, every event log is whole, and the database passes its own integrity check.
"""

from __future__ import annotations

import signal
from pathlib import Path

import anyio

from tests.crash_drill import Load, Seen, find_damage, integrity_problems, load_until_killed, serve, stuck_after

ROUNDS = 3
LEASE_SECONDS = 1.0
LOAD = Load(clients=24, seconds=2.0, max_seconds=20.0, floor=6)


def test_nothing_acknowledged_is_lost_when_the_server_is_killed(fresh_db_url: str, tmp_path: Path) -> None:
    db_url = fresh_db_url
    seen = Seen()
    log = tmp_path / "serve.log"
    process, url = serve(db_url, log, LEASE_SECONDS)
    try:
        for _ in range(ROUNDS):
            anyio.run(load_until_killed, url, process, seen, LOAD)
            assert process.returncode == -signal.SIGKILL
            process, url = serve(db_url, log, LEASE_SECONDS)
            damage = anyio.run(find_damage, url, seen)
            assert damage.lost == [] and damage.changed == [], damage
            assert stuck_after(db_url, 4 * LEASE_SECONDS + 10) == 0, "responses still unfinished past their lease"
            assert integrity_problems(db_url) == []
    finally:
        process.terminate()
        process.wait(timeout=30)
    # The load was real: every round acknowledged responses of every kind. Alone this test sees about
    # 60 a round on SQLite and 25 on PostgreSQL; at the end of the full suite on a busy 2-core machine
    # as few as 7 in three rounds on PostgreSQL after the first 2 s, so each round's load lasts until
    # it has something to lose (Load.floor). The floor only rules out a vacuous run; what is checked
    # is that every acknowledged response survived.
    assert len(seen.ended) >= LOAD.floor * ROUNDS and seen.ended_in_background() >= ROUNDS, (
        len(seen.ended),
        seen.ended_in_background(),
    )
