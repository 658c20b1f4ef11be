"""A stored response says one thing: its status column (what recovery and chains read) and its body
(what GET serves) are written from one copy taken when the save was asked for, in one transaction,
however long the write waits while the run goes on. Rows a version before this one left saying two
things are repaired by migration 0017, and the schema is migrated by one process at a time.

These drive the store directly (the class the server uses): the race is between a write waiting for
its turn and the run changing the response, which no HTTP client can time.
"""

from __future__ import annotations

import asyncio
import subprocess
import sys
import time

import anyio
import pytest
from sqlalchemy import text

from responsa.engine.responses.run._leases import Leases
from responsa.protocol import Message, ResponseObject
from responsa.store import SqlStore
from responsa.store.sql._database import open_database
from responsa.store.sql._migrate import upgrade_to
from responsa.store.sql._tables import SCHEMA_VERSION
from tests.crash_drill import disagreeing, query


def _started(response_id: str) -> ResponseObject:
    return ResponseObject(id=response_id, created_at=int(time.time()), status="in_progress", model="sim")


def _question() -> Message:
    return Message.model_validate({"type": "message", "role": "user", "content": "Tell me about rivers"})


def test_a_save_stores_the_response_as_it_was_when_asked(fresh_db_url: str) -> None:
    """The first save of a streamed response runs in a task of its own; the run finishes while it waits
    for its batch (SQLite) or a pooled connection (PostgreSQL). What is stored is the response as it
    was when the save was asked for, column and body alike, and recovery finds it unfinished."""

    async def main() -> None:
        store = SqlStore(fresh_db_url)
        await store.migrate()
        response = _started("resp_raced")
        expired = time.time() - 1  # its process is gone: the lease ran out
        save = asyncio.get_running_loop().create_task(store.save_response(response, [_question()], lease_until=expired))
        await asyncio.sleep(0)  # the save has been asked for (dumped, queued), not yet written
        response.status = "completed"  # the run goes on and ends
        await save
        assert await anyio.to_thread.run_sync(disagreeing, fresh_db_url) == 0
        stored = await store.get_response(response.id)
        assert stored is not None and stored.status == "in_progress"
        assert await Leases(store, 30.0).recover() == 1  # the recovery reads the column: it finds it
        recovered = await store.get_response(response.id)
        assert recovered is not None and recovered.status == "failed"
        assert recovered.error is not None and recovered.error.code == "server_restarted"
        await store.aclose()

    anyio.run(main)


async def _run(db_url: str, statement: str, **params: object) -> None:
    database = open_database(db_url)
    try:
        await database.write(lambda conn: conn.execute(text(statement), params))
    finally:
        await database.aclose()


def test_rows_left_saying_two_things_are_repaired_and_then_recovered(fresh_db_url: str) -> None:
    """A row an older version left with ``completed`` in its column and ``in_progress`` in its body
    (killed between the two saves) is unfinished after the migration, and start-up recovery ends it."""
    body = '{"id":"resp_stuck","object":"response","created_at":1,"status":"in_progress","model":"sim"}'

    async def main() -> None:
        database = open_database(fresh_db_url)
        await database.migrate(upgrade_to("0016"))
        await database.aclose()
        lease = time.time() + 3600  # its old process's lease, never renewed again
        await _run(
            fresh_db_url,
            "INSERT INTO responses (id, created_at, status, body, stored_at, background, tenant, lease_until) "
            "VALUES ('resp_stuck', 1, 'completed', :body, :now, false, 'default', :lease)",
            body=body,
            now=time.time(),
            lease=lease,
        )
        assert await anyio.to_thread.run_sync(disagreeing, fresh_db_url) == 1
        store = SqlStore(fresh_db_url)
        await store.migrate()
        assert await anyio.to_thread.run_sync(disagreeing, fresh_db_url) == 0
        assert await Leases(store, 30.0).recover() == 1
        recovered = await store.get_response("resp_stuck")
        assert recovered is not None and recovered.status == "failed"
        await store.aclose()

    anyio.run(main)


_MIGRATE = "import asyncio, sys; from responsa.store import SqlStore; asyncio.run(SqlStore(sys.argv[1]).migrate())"


REPLICAS = 4
"""Four at once hold every pair's race (six pairs; two replicas without the lock failed 9 starts in 10), so
one start catches a lost lock: the two repeats it had cost the suite ~40 s of CPU. Two replicas alone, a
case of their own before that, cost ~38 s more."""


def test_replicas_starting_together_migrate_once(fresh_db_url: str) -> None:
    """Processes migrating an empty store at the same moment all succeed: one migrates, the others
    wait for it and find the schema at its head (before the lock, two PostgreSQL replicas failed in
    9 starts of 10 on ``CREATE TABLE alembic_version``)."""
    runs = [
        subprocess.Popen([sys.executable, "-c", _MIGRATE, fresh_db_url], stderr=subprocess.PIPE, text=True)
        for _ in range(REPLICAS)
    ]
    failures = [run.communicate(timeout=120)[1] for run in runs]
    assert [run.returncode for run in runs] == [0] * REPLICAS, failures
    assert query(fresh_db_url, "SELECT version_num FROM alembic_version") == [(SCHEMA_VERSION,)]


def test_a_store_migrated_by_a_newer_version_is_refused(fresh_db_url: str) -> None:
    from responsa.store.sql._migrate import SchemaTooNew

    async def main() -> None:
        store = SqlStore(fresh_db_url)
        await store.migrate()
        await _run(fresh_db_url, "UPDATE alembic_version SET version_num = '9999'")
        with pytest.raises(SchemaTooNew, match="9999"):
            await store.migrate()
        await store.aclose()

    anyio.run(main)
    served = subprocess.run(
        [sys.executable, "-m", "responsa.cli", "serve", "--no-embedded", "--port", "0", "--db", fresh_db_url],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert served.returncode != 0
    assert "schema is at revision 9999" in served.stdout + served.stderr
