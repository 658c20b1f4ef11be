"""Storage faults, induced for real: a full disk and a vanished file under SQLite (a ``responsa serve``
on a small tmpfs of its own), a read-only and an unreachable database under PostgreSQL.

While a fault lasts every write gets an OpenAI-shaped ``503`` (``storage_unavailable``, with
``retry-after``) or, on a stream, an ``error`` event in place of the terminal event; ``/health`` says
``503 degraded`` and why; everything acknowledged before stays retrievable; and the server serves
again once the fault clears, with no restart.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio
import asyncpg
import httpx
import openai
import pytest

from responsa.config import Settings
from tests.conftest import POSTGRES_ADMIN_URL, fresh_postgres_database, serve, start_serve
from tests.http.test_streaming import parse_frames

ENDS = ("response.completed", "response.incomplete", "response.failed")
BIG_INPUT = "rivers and mountains " * 15_000
"""About 300 KB: a few of these need more room than a full disk has."""


@dataclass
class SmallDisk:
    """A server whose SQLite file lives on a 4 MB tmpfs only it (and ``inside``) can see."""

    url: str
    inside: Path
    """The tmpfs, as seen from outside the server's mount namespace."""
    process: subprocess.Popen[bytes]


def _user_namespaces_work() -> str | None:
    if shutil.which("unshare") is None:
        return "no unshare(1)"
    tried = subprocess.run(["unshare", "--user", "--map-root-user", "--mount", "true"], capture_output=True)
    return None if tried.returncode == 0 else f"unshare failed: {tried.stderr.decode().strip()}"


@pytest.fixture
def small_disk(tmp_path: Path) -> Iterator[SmallDisk]:
    why_not = _user_namespaces_work()
    if why_not is not None:
        if os.environ.get("RESPONSA_REQUIRE_SANDBOX"):  # CI: user namespaces work there (bubblewrap needs them)
            pytest.fail(f"a private tmpfs cannot be mounted: {why_not}", pytrace=False)
        pytest.skip(f"a private tmpfs cannot be mounted: {why_not}")
    mount = tmp_path / "disk"
    mount.mkdir()
    prefix = ["unshare", "--user", "--map-root-user", "--mount", "sh", "-c",
              'mount -t tmpfs -o size=4m tmpfs "$0" && exec "$@"', str(mount)]  # fmt: skip
    options = [
        "--db",
        f"sqlite:///{mount / 'r.db'}",
        "--no-embedded",
        "--no-code-interpreter",
        "--log-level",
        "warning",
    ]
    process, url = start_serve(*options, log=tmp_path / "serve.log", prefix=prefix)
    try:
        yield SmallDisk(url, Path(f"/proc/{process.pid}/root") / mount.relative_to("/"), process)
    finally:
        process.terminate()
        process.wait(timeout=30)


def _fill(disk: Path) -> Path:
    filler = disk / "filler"
    with filler.open("wb") as sink:
        try:
            while True:
                sink.write(b"\0" * 65536)
                sink.flush()
        except OSError:
            pass
    return filler


def _is_storage_error(error: dict[str, Any]) -> bool:
    return error["type"] == "service_unavailable" and error["code"] == "storage_unavailable"


def _create_until_refused(http: httpx.Client) -> httpx.Response:
    """Writes may still fit in space the database already holds: send big ones until one is refused."""
    for _ in range(30):
        reply = http.post("/v1/responses", json={"model": "sim", "input": BIG_INPUT})
        if reply.status_code != 200:
            return reply
    raise AssertionError("30 writes of 300 KB each fit on a full 4 MB disk")


def _health(http: httpx.Client) -> httpx.Response:
    return http.get("/health")


def test_a_full_disk_refuses_writes_with_a_retryable_error_and_recovers(small_disk: SmallDisk) -> None:
    sdk = openai.OpenAI(base_url=f"{small_disk.url}/v1", api_key="unused", max_retries=0)
    with httpx.Client(base_url=small_disk.url, timeout=60) as http:
        kept = sdk.responses.create(model="sim", input="Tell me about rivers")
        assert _health(http).json() == {"status": "ok", "store": {"status": "ok"}}
        filler = _fill(small_disk.inside)

        refused = _create_until_refused(http)
        assert refused.status_code == 503 and refused.headers["retry-after"] == "1"
        assert _is_storage_error(refused.json()["error"]) and "disk is full" in refused.json()["error"]["message"]
        health = _health(http)
        assert health.status_code == 503
        assert health.json()["status"] == "degraded" and "the disk is full" in health.json()["store"]["error"]

        # A stream cannot end unless it is stored: its end is an `error` event instead; one that did
        # end (the write fitted after all) is retrievable as it was seen.
        for _ in range(3):
            frames = parse_frames(
                http.post("/v1/responses", json={"model": "sim", "input": BIG_INPUT, "stream": True}).content
            )
            last = frames[-1]
            if last["type"] in ENDS:
                assert sdk.responses.retrieve(last["response"]["id"]).model_dump(mode="json") == last["response"]
                continue
            assert (
                last["type"] == "error" and _is_storage_error(last["error"]) and last["code"] == "storage_unavailable"
            )
            assert [frame["sequence_number"] for frame in frames] == list(range(len(frames)))
            assert not any(frame["type"] in ENDS for frame in frames)
            created = next(frame for frame in frames if frame["type"] == "response.created")["response"]["id"]
            assert http.get(f"/v1/responses/{created}").json().get("status") != "completed"
            break
        else:
            raise AssertionError("three big streams were stored on a full disk")

        assert sdk.responses.retrieve(kept.id) == kept  # reads go on

        filler.unlink()
        health = _health(http)  # probes with a write of its own: healthy again without a client's write
        assert health.status_code == 200 and health.json()["store"] == {"status": "ok"}
        again = sdk.responses.create(model="sim", input=BIG_INPUT)
        assert sdk.responses.retrieve(again.id).output_text == again.output_text
        assert sdk.responses.retrieve(kept.id) == kept


def test_a_vanished_database_file_refuses_writes_until_it_is_back(small_disk: SmallDisk) -> None:
    """Writes to a deleted file would be lost at the next start: they are refused instead."""
    sdk = openai.OpenAI(base_url=f"{small_disk.url}/v1", api_key="unused", max_retries=0)
    with httpx.Client(base_url=small_disk.url, timeout=60) as http:
        kept = sdk.responses.create(model="sim", input="Tell me about rivers")
        database = small_disk.inside / "r.db"
        database.rename(small_disk.inside / "moved.db")

        refused = http.post("/v1/responses", json={"model": "sim", "input": "Tell me about lakes"})
        assert refused.status_code == 503 and _is_storage_error(refused.json()["error"])
        assert "gone" in refused.json()["error"]["message"]
        background = http.post("/v1/responses", json={"model": "sim", "input": "lakes", "background": True})
        assert background.status_code == 503 and _is_storage_error(background.json()["error"])
        assert _health(http).status_code == 503

        (small_disk.inside / "moved.db").rename(database)
        assert _health(http).status_code == 200
        again = sdk.responses.create(model="sim", input="Tell me about lakes")
        assert sdk.responses.retrieve(again.id) == again and sdk.responses.retrieve(kept.id) == kept


async def _admin(*statements: str) -> None:
    conn = await asyncpg.connect(POSTGRES_ADMIN_URL)
    try:
        for statement in statements:
            await conn.execute(statement)
    finally:
        await conn.close()


def _postgres(database: str, *statements: str) -> None:
    """Run admin statements, then drop the server's connections to ``database`` so that new ones see them."""
    kick = f"SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = '{database}'"
    anyio.run(_admin, *statements, kick)


def _until(check: Any, tries: int = 20) -> httpx.Response:
    """The first reply ``check`` accepts: a pool's connections that were dropped fail one by one first."""
    for _ in range(tries):
        reply = check()
        if reply is not None:
            return reply
    raise AssertionError(f"not within {tries} tries")


def test_a_read_only_or_unreachable_postgresql_database_is_a_retryable_error() -> None:
    with fresh_postgres_database() as url, serve(Settings(db_url=url, embedded=False)) as live:
        name = url.rsplit("/", 1)[1]
        sdk = openai.OpenAI(base_url=f"{live.url}/v1", api_key="unused", max_retries=0)
        http = httpx.Client(base_url=live.url, timeout=60)
        kept = sdk.responses.create(model="sim", input="Tell me about rivers")

        def create() -> httpx.Response:
            return http.post("/v1/responses", json={"model": "sim", "input": "Tell me about lakes"})

        def refused_for(reason: str) -> Any:
            reply = create()
            assert reply.status_code == 503 and _is_storage_error(reply.json()["error"]), reply.text
            return reply if reason in reply.json()["error"]["message"] else None

        def served() -> httpx.Response | None:
            reply = create()
            return reply if reply.status_code == 200 else None

        _postgres(name, f"ALTER DATABASE {name} SET default_transaction_read_only = on")
        _until(lambda: refused_for("read-only"))
        assert _health(http).json()["store"]["error"] == "the database is read-only"
        assert sdk.responses.retrieve(kept.id) == kept  # reads go on

        _postgres(name, f"ALTER DATABASE {name} RESET default_transaction_read_only")
        _until(lambda: reply if (reply := _health(http)).status_code == 200 else None)
        assert _until(served).json()["status"] == "completed"

        _postgres(name, f"ALTER DATABASE {name} WITH ALLOW_CONNECTIONS false")
        _until(lambda: refused_for("cannot connect"))
        unreachable = http.get(f"/v1/responses/{kept.id}")
        assert unreachable.status_code == 503 and _is_storage_error(unreachable.json()["error"])
        assert _health(http).status_code == 503

        _postgres(name, f"ALTER DATABASE {name} WITH ALLOW_CONNECTIONS true")
        _until(served)
        assert _health(http).status_code == 200 and sdk.responses.retrieve(kept.id) == kept
        http.close()


def test_postgresql_connections_dropped_under_the_pool_cost_no_read() -> None:
    """A database restart (or an administrator) ends every connection the server's pool holds: the
    next read finds its connection dropped, and is served on a new one rather than refused."""
    with fresh_postgres_database() as url, serve(Settings(db_url=url, embedded=False)) as live:
        sdk = openai.OpenAI(base_url=f"{live.url}/v1", api_key="unused", max_retries=0)
        kept = sdk.responses.create(model="sim", input="Tell me about rivers")
        assert sdk.responses.retrieve(kept.id) == kept  # the pool holds the connections that served these
        _postgres(url.rsplit("/", 1)[1])
        assert sdk.responses.retrieve(kept.id) == kept
        with httpx.Client(base_url=live.url, timeout=60) as http:
            assert _health(http).status_code == 200
