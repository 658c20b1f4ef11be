"""The crash drill, shared by tests/test_crash.py (which asserts that nothing is lost) and
bench/crash.py (which prints the figures): clients load a real ``responsa serve`` (JSON, streamed,
streamed in the background; all stored) until it is SIGKILLed; after a restart on the same store,
what the clients saw end is compared with what the server returns, unfinished responses are watched
until their leases run out, and the database is checked for damage.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import sqlite3
import subprocess
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio
import asyncpg
import httpx

from tests.conftest import start_serve

MODES = ("json", "stream", "background")
ENDS = ("response.completed", "response.incomplete", "response.failed")
UNFINISHED = "SELECT count(*) FROM responses WHERE status IN ('queued', 'in_progress')"
EVENT_LOGS = """
    SELECT e.response_id, count(*), min(e.sequence_number), max(e.sequence_number),
           sum(CASE WHEN e.type IN ('response.completed', 'response.incomplete', 'response.failed') THEN 1 ELSE 0 END),
           max(r.status)
    FROM response_events e JOIN responses r ON r.id = e.response_id
    GROUP BY e.response_id
"""
DISAGREEING = {
    "sqlite": "SELECT count(*) FROM responses WHERE status <> json_extract(body, '$.status')",
    "postgresql": "SELECT count(*) FROM responses WHERE status <> (body::jsonb ->> 'status')",
}
"""Responses whose status column (what recovery and chains read) and body (what GET serves) disagree."""
STRAY_ITEMS = "SELECT count(*) FROM response_items i LEFT JOIN responses r ON r.id = i.response_id WHERE r.id IS NULL"


@dataclass
class Seen:
    """What the clients were told."""

    ended: dict[str, dict[str, Any]] = field(default_factory=dict)
    """Response id -> the response as the client saw it end."""
    queued: set[str] = field(default_factory=set)
    """Background responses whose creation was acknowledged."""
    requests: int = 0

    def ended_in_background(self) -> int:
        return len(self.queued & self.ended.keys())


@dataclass(frozen=True)
class Load:
    """How hard and how long the clients push before the kill."""

    clients: int = 24
    seconds: float = 2.0
    max_seconds: float = 20.0
    """A busy machine may have acknowledged almost nothing after ``seconds``: the load goes on until
    the round has ``floor`` more ended responses (one in the background), up to this long."""
    floor: int = 6
    token_delay_ms: int = 2
    """The simulator's pace: at 0 a response ends about as soon as its first save is asked for."""


def serve(
    db_url: str, log: Path, lease_seconds: float, workers: int = 1, token_delay_ms: int = 2
) -> tuple[subprocess.Popen[bytes], str]:
    """A ``responsa serve`` process on the store (with ``workers`` worker processes), answering; and its URL."""
    options = ["--db", db_url, "--no-embedded", "--no-code-interpreter", "--sim-token-delay-ms", str(token_delay_ms),
               "--log-level", "warning", "--background-lease-secs", str(lease_seconds), "--workers", str(workers)]  # fmt: skip
    return start_serve(*options, log=log)


def _process_tree(pid: int) -> list[int]:
    """``pid`` and every process under it (from /proc)."""
    tree = [pid]
    try:
        for task in Path(f"/proc/{pid}/task").iterdir():
            for child in (task / "children").read_text().split():
                tree += _process_tree(int(child))
    except FileNotFoundError:  # it ended meanwhile (a short-lived child)
        pass
    return tree


def kill_tree(process: subprocess.Popen[bytes]) -> None:
    """SIGKILL the server and every process under it at once: all are stopped first, so no worker
    hears its parent die (and drains) and no parent replaces a worker."""
    tree = _process_tree(process.pid)
    for each in (signal.SIGSTOP, signal.SIGKILL):
        for pid in tree:
            with contextlib.suppress(ProcessLookupError):  # a short-lived child that ended meanwhile
                os.kill(pid, each)


async def _one(client: httpx.AsyncClient, mode: str, number: int, seen: Seen) -> None:
    body: dict[str, Any] = {"model": "sim", "input": f"Tell me about rivers, request {number}"}
    seen.requests += 1
    if mode == "json":
        reply = await client.post("/v1/responses", json=body)
        reply.raise_for_status()
        seen.ended[reply.json()["id"]] = reply.json()
        return
    body |= {"stream": True, "background": mode == "background"}
    async with client.stream("POST", "/v1/responses", json=body) as reply:
        reply.raise_for_status()
        async for line in reply.aiter_lines():
            if not line.startswith("data: {"):
                continue
            event = json.loads(line.removeprefix("data: "))
            if event["type"] == "response.created" and mode == "background":
                seen.queued.add(event["response"]["id"])
            if event["type"] in ENDS:
                seen.ended[event["response"]["id"]] = event["response"]


async def load_until_killed(url: str, process: subprocess.Popen[bytes], seen: Seen, load: Load = Load()) -> None:
    """``load.clients`` clients create responses back to back until the server is SIGKILLed under them."""
    killed = anyio.Event()

    async def client_loop(index: int) -> None:
        async with httpx.AsyncClient(base_url=url, timeout=30) as client:
            number = 0
            while True:
                number += 1
                try:
                    await _one(client, MODES[index % len(MODES)], index * 100_000 + number, seen)
                except httpx.TransportError:
                    if killed.is_set():
                        return
                    raise

    ended, background = len(seen.ended), seen.ended_in_background()
    async with anyio.create_task_group() as clients:
        for index in range(load.clients):
            clients.start_soon(client_loop, index)
        await anyio.sleep(load.seconds)
        with anyio.move_on_after(load.max_seconds - load.seconds):
            while len(seen.ended) < ended + load.floor or seen.ended_in_background() <= background:
                await anyio.sleep(0.05)
        killed.set()
        kill_tree(process)
    process.wait(timeout=10)


@dataclass
class Damage:
    lost: list[str] = field(default_factory=list)
    """Acknowledged, then not found."""
    changed: list[str] = field(default_factory=list)
    """Found, but not as the client saw it end."""


async def find_damage(url: str, seen: Seen) -> Damage:
    """Every response a client saw end (or saw queued), retrieved from the restarted server."""
    damage = Damage()
    limit = anyio.Semaphore(16)

    async def check(client: httpx.AsyncClient, response_id: str) -> None:
        async with limit:
            reply = await client.get(f"/v1/responses/{response_id}")
        if reply.status_code != 200:
            damage.lost.append(f"{response_id}: {reply.status_code}")
        elif response_id in seen.ended and reply.json() != seen.ended[response_id]:
            damage.changed.append(response_id)

    async with httpx.AsyncClient(base_url=url, timeout=30) as client, anyio.create_task_group() as checks:
        for response_id in seen.ended.keys() | seen.queued:
            checks.start_soon(check, client, response_id)
    return damage


def query(db_url: str, statement: str) -> list[tuple[Any, ...]]:
    if db_url.startswith("sqlite:///"):
        with sqlite3.connect(db_url.removeprefix("sqlite:///")) as conn:
            return list(conn.execute(statement))

    async def run() -> list[tuple[Any, ...]]:
        conn = await asyncpg.connect(db_url)
        try:
            return [tuple(row) for row in await conn.fetch(statement)]
        finally:
            await conn.close()

    return anyio.run(run)


def integrity_problems(db_url: str) -> list[str]:
    """The database's own check, stray items, and event logs with gaps or the wrong number of ends."""
    problems = []
    if db_url.startswith("sqlite:///"):
        if (found := query(db_url, "PRAGMA integrity_check")) != [("ok",)]:
            problems.append(f"integrity_check: {found}")
    else:  # amcheck verifies every B-tree index against its table (it raises on damage)
        query(db_url, "CREATE EXTENSION IF NOT EXISTS amcheck")
        indexes = (
            "SELECT c.oid FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid JOIN pg_am a ON a.oid = c.relam "
            "WHERE c.relnamespace = 'public'::regnamespace AND a.amname = 'btree'"
        )  # the GIN full-text index of chunks is not a B-tree
        query(db_url, f"SELECT bt_index_check(oid, true) FROM ({indexes}) AS ix")
    if (stray := query(db_url, STRAY_ITEMS)) != [(0,)]:
        problems.append(f"items of no response: {stray}")
    for response_id, count, first, last, ends, status in query(db_url, EVENT_LOGS):
        if (first, last) != (0, count - 1):
            problems.append(f"{response_id}'s event log has gaps")
        ended = status in ("completed", "incomplete", "failed", "cancelled")
        if ends != (1 if ended and status != "cancelled" else 0):
            problems.append(f"{response_id} ({status}) has {ends} ends")
    return problems


def disagreeing(db_url: str) -> int:
    """How many stored responses say two things (see :data:`DISAGREEING`)."""
    return int(query(db_url, DISAGREEING["sqlite" if db_url.startswith("sqlite") else "postgresql"])[0][0])


def stuck_after(db_url: str, seconds: float) -> int:
    """How many responses are still queued or in progress after waiting up to ``seconds`` for their
    leases to run out (orphans are failed at start-up, or at the next look one lease on)."""
    deadline = time.monotonic() + seconds
    while (left := query(db_url, UNFINISHED)[0][0]) > 0 and time.monotonic() < deadline:
        time.sleep(0.1)
    return int(left)


@dataclass
class Round:
    """What the restarted server and its store showed after one kill."""

    damage: Damage
    stuck: int
    problems: list[str]
    disagreeing: int
    """Responses whose status column and body disagreed once the restarted server had recovered."""


def drill(
    db_url: str, log: Path, seen: Seen, rounds: int, load: Load, lease_seconds: float, workers: int = 1
) -> Iterator[Round]:
    """Serve on the store, then ``rounds`` times: load until SIGKILL (of the whole process tree),
    restart, and check what survived (cumulative: each round checks everything acknowledged so far).
    Close it (``contextlib.closing``) to stop the last server even when the caller stops early."""
    process, url = serve(db_url, log, lease_seconds, workers, load.token_delay_ms)
    try:
        for _ in range(rounds):
            anyio.run(load_until_killed, url, process, seen, load)
            assert process.returncode == -signal.SIGKILL
            process, url = serve(db_url, log, lease_seconds, workers, load.token_delay_ms)
            damage = anyio.run(find_damage, url, seen)
            stuck = stuck_after(db_url, 4 * lease_seconds + 10)
            yield Round(damage, stuck, integrity_problems(db_url), disagreeing(db_url))
    finally:
        process.terminate()
        process.wait(timeout=30)
