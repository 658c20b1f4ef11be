"""Two replicas sharing a store look for orphaned responses at the same moment: each orphan is ended
``failed`` exactly once, with exactly one terminal event in its log (each claims it first, atomically).
On SQLite and PostgreSQL; the replicas are two stores on the same database, as two processes are."""

from __future__ import annotations

import time

import anyio

from responsa.engine.responses.run._leases import Leases
from responsa.protocol import LifecycleEvent, ResponseObject
from responsa.store import LoggedEvent, SqlStore

ORPHANS = 12


def _in_progress(number: int) -> ResponseObject:
    return ResponseObject.model_validate(
        {
            "id": f"resp_orphan{number:04d}",
            "object": "response",
            "created_at": int(time.time()),
            "model": "sim",
            "status": "in_progress",
            "output": [],
            "background": True,
            "store": True,
        }
    )


async def _two_replicas_recover(db_url: str) -> tuple[list[int], list[list[LoggedEvent]], list[ResponseObject]]:
    first, second = SqlStore(db_url), SqlStore(db_url)
    try:
        await first.migrate()
        expired = time.time() - 60  # the process that held these died a minute ago
        for number in range(ORPHANS):
            response = _in_progress(number)
            created = LifecycleEvent(type="response.created", response=response, sequence_number=0)
            await first.save_response(response, [], lease_until=expired,
                                      events=[LoggedEvent(0, created.type, created.model_dump_json())])  # fmt: skip
        ended: list[int] = []

        async def recover(store: SqlStore) -> None:
            ended.append(await Leases(store, 5.0).recover())

        async with anyio.create_task_group() as group:
            group.start_soon(recover, first)
            group.start_soon(recover, second)
        logs = [await first.events_after(_in_progress(n).id, -1) for n in range(ORPHANS)]
        stored = [await first.get_response(_in_progress(n).id) for n in range(ORPHANS)]
        return ended, logs, [response for response in stored if response is not None]
    finally:
        await first.aclose()
        await second.aclose()


def test_two_replicas_never_both_end_the_same_orphan(fresh_db_url: str) -> None:
    ended, logs, stored = anyio.run(_two_replicas_recover, fresh_db_url)
    assert sum(ended) == ORPHANS
    assert [response.status for response in stored] == ["failed"] * ORPHANS
    for log in logs:
        assert [event.type for event in log] == ["response.created", "response.failed"]
        assert [event.sequence_number for event in log] == [0, 1]
