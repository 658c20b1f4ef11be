"""Never acknowledge what is not durable: a streamed response's terminal event goes out only once its
final state is stored. Shown on PostgreSQL by holding a lock that stops writes to the responses
table: the stream's last delta arrives, ``response.completed`` waits for the lock to go; the same
for a background stream, followed live by its creator and resumed from another replica."""

from __future__ import annotations

import json
import subprocess
import threading
import time
from collections.abc import Iterator
from typing import Any

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


@pytest.fixture(scope="module")
def slow_replicas(postgres_url: str) -> Iterator[tuple[LiveServer, LiveServer]]:
    """Two replicas on the same database whose simulator takes 30 ms a token."""
    settings = Settings(db_url=postgres_url, embedded=False, sim_token_delay_ms=30)
    with serve(settings) as first, serve(settings) as second:
        yield first, second


class TimedStream:
    """An SSE stream read in a thread: when each event type first arrived, and the events."""

    def __init__(self, method: str, url: str, body: dict[str, Any] | None = None) -> None:
        self.arrivals: dict[str, float] = {}
        self.events: list[dict[str, Any]] = []
        self.done_at: float | None = None
        self._thread = threading.Thread(target=self._read, args=(method, url, body))
        self._thread.start()

    def _read(self, method: str, url: str, body: dict[str, Any] | None) -> None:
        with httpx.stream(method, url, json=body, timeout=30) as reply:
            for line in reply.iter_lines():
                if line == "data: [DONE]":
                    self.done_at = time.monotonic()
                elif line.startswith("data: {"):
                    event = json.loads(line.removeprefix("data: "))
                    self.events.append(event)
                    self.arrivals.setdefault(event["type"], time.monotonic())

    def wait_for(self, event_type: str) -> None:
        deadline = time.monotonic() + 10
        while event_type not in self.arrivals:
            assert time.monotonic() < deadline, f"no {event_type} event"
            time.sleep(0.01)

    def join(self) -> None:
        self._thread.join(30)
        assert not self._thread.is_alive()


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


def test_a_background_stream_ends_only_after_its_end_is_stored(
    slow_replicas: tuple[LiveServer, LiveServer], postgres_url: str
) -> None:
    first, second = slow_replicas
    body = {"model": "sim", "input": "Tell me about rivers", "stream": True, "background": True}
    created = TimedStream("POST", f"{first.v1}/responses", body)
    created.wait_for("response.in_progress")  # the in-progress state is stored by now
    response_id = created.events[0]["response"]["id"]
    assert httpx.get(f"{second.v1}/responses/{response_id}").json()["status"] in ("queued", "in_progress")
    locker = _hold_write_lock(postgres_url)
    resumed = TimedStream("GET", f"{second.v1}/responses/{response_id}?stream=true&starting_after=0")
    locker.wait(timeout=30)
    released = time.monotonic()
    created.join()
    resumed.join()
    for stream in (created, resumed):
        # Text kept flowing under the lock (the event log is another table); the end waited for it.
        assert stream.arrivals["response.output_text.delta"] < released - 1.0
        assert stream.arrivals["response.completed"] >= released - 0.5
        assert stream.done_at is not None and stream.done_at >= stream.arrivals["response.completed"]
    assert [e["sequence_number"] for e in resumed.events] == [e["sequence_number"] for e in created.events][1:]
    stored = httpx.get(f"{second.v1}/responses/{response_id}").json()
    assert stored == created.events[-1]["response"]
