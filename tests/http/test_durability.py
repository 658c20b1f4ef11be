"""Never acknowledge what is not durable: a streamed response's terminal event goes out only once its
final state is stored. Shown on PostgreSQL by holding a lock that stops writes to the responses
table: the stream's last delta arrives, ``response.completed`` waits for the lock to go."""

from __future__ import annotations

import json
import subprocess
import time
from collections.abc import Iterator

import anyio
import asyncpg
import httpx
import pytest

from responsa.config import Settings
from tests.conftest import LiveServer, serve

LOCK_SECONDS = 3.0


@pytest.fixture(scope="module")
def pg_server(postgres_url: str) -> Iterator[LiveServer]:
    with serve(Settings(db_url=postgres_url, embedded=False)) as live:
        yield live


def _hold_write_lock(url: str) -> subprocess.Popen[str]:
    """``psql`` holding EXCLUSIVE on ``responses`` (reads go on, writes wait) for LOCK_SECONDS;
    returns once the lock is granted (seen in ``pg_locks``)."""
    statements = ["BEGIN", "LOCK TABLE responses IN EXCLUSIVE MODE", f"SELECT pg_sleep({LOCK_SECONDS})", "COMMIT"]
    locker = subprocess.Popen(["psql", url, "-qAt", *(arg for sql in statements for arg in ("-c", sql))])

    async def granted() -> bool:
        connection = await asyncpg.connect(url)
        try:
            query = "SELECT count(*) FROM pg_locks WHERE relation = 'responses'::regclass AND mode = 'ExclusiveLock' AND granted"
            return bool(await connection.fetchval(query))
        finally:
            await connection.close()

    deadline = time.monotonic() + 10
    while not anyio.run(granted):
        assert locker.poll() is None and time.monotonic() < deadline, "psql did not take the lock"
    return locker


def test_completed_is_sent_only_after_the_response_is_stored(pg_server: LiveServer, postgres_url: str) -> None:
    locker = _hold_write_lock(postgres_url)
    body = {"model": "sim", "input": "Tell me about rivers", "stream": True}
    arrivals: dict[str, float] = {}
    with httpx.stream("POST", f"{pg_server.v1}/responses", json=body, timeout=30) as reply:
        for line in reply.iter_lines():
            if line.startswith("data: {"):
                event = json.loads(line.removeprefix("data: "))
                arrivals.setdefault(event["type"], time.monotonic())
                if event["type"] == "response.completed":
                    response_id = event["response"]["id"]
    locker.wait(timeout=30)
    released = time.monotonic()
    # The text streamed while the table was locked; the end waited for the save the lock held up.
    assert arrivals["response.output_text.done"] < released - 1.0
    assert arrivals["response.completed"] >= released - 0.5
    stored = httpx.get(f"{pg_server.v1}/responses/{response_id}", timeout=30).json()
    assert stored["status"] == "completed" and stored["output_text"]
