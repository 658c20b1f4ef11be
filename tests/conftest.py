"""Fixtures: a real responsa server on loopback (uvicorn in a thread) and SDK clients for it."""

from __future__ import annotations

import json
import os
import secrets
import socket
import subprocess
import sys
import threading
import time
from collections import Counter
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio
import httpx
import openai
import pytest
import uvicorn
from starlette.types import ASGIApp

from responsa.config import Settings
from responsa.serve import connection_options, create_app
from tests.backends.mock_upstream import MockUpstream
from tests.in_process import app_client, app_http, in_process_app, session_store_url, suite_settings  # noqa: F401  # fixtures
from tests.migrated import seed
from tests.scripted import scripted, scripted_module  # noqa: F401  # fixtures
from tests.suite_threads import SUITE_THREADS_ENV


@dataclass
class LiveServer:
    """A server bound to an ephemeral loopback port."""

    url: str
    settings: Settings

    @property
    def v1(self) -> str:
        return f"{self.url}/v1"


class _Serving:
    def __init__(self, app: ASGIApp, settings: Settings, grace: float) -> None:
        config = uvicorn.Config(
            app,
            host="127.0.0.1",
            port=0,
            log_level="warning",
            lifespan="on",
            timeout_graceful_shutdown=max(int(grace), 1),
            **connection_options(settings),
        )  # as responsa serve runs it
        self.server = uvicorn.Server(config)
        self.thread = threading.Thread(target=self.server.run, daemon=True)
        self.settings = settings

    def __enter__(self) -> LiveServer:
        self.thread.start()
        while not self.server.started:
            if not self.thread.is_alive():
                raise RuntimeError("server failed to start")
            self.thread.join(0.01)
        port = self.server.servers[0].sockets[0].getsockname()[1]
        return LiveServer(url=f"http://127.0.0.1:{port}", settings=self.settings)

    def __exit__(self, *exc: object) -> None:
        self.server.should_exit = True
        self.thread.join(10)


class StreamReader:
    """A streamed ``POST`` read in a thread, so a test can act (cancel, retrieve) while it runs:
    ``events`` as they arrive, ``ready`` set once ``after`` of them came."""

    def __init__(
        self, url: str, body: dict[str, Any], after: int, timeout: float = 30, headers: dict[str, str] | None = None
    ) -> None:
        self.events: list[dict[str, Any]] = []
        self.ready = threading.Event()
        self.status: int | None = None
        self.body = b""
        """The reply's body when it is not a stream (an error)."""
        self.first_at: float | None = None
        """When the first event arrived (``time.monotonic``)."""
        self._thread = threading.Thread(target=self._read, args=(url, body, after, timeout, headers))
        self._thread.start()

    def _read(self, url: str, body: dict[str, Any], after: int, timeout: float, headers: dict[str, str] | None) -> None:
        with httpx.stream("POST", url, json=body, timeout=timeout, headers=headers) as reply:
            self.status = reply.status_code
            if reply.status_code != 200:
                self.body = reply.read()
                return
            for line in reply.iter_lines():
                if line.startswith("data: {"):
                    self.first_at = self.first_at or time.monotonic()
                    self.events.append(json.loads(line[6:]))
                    if len(self.events) == after:
                        self.ready.set()

    def join(self, seconds: float) -> bool:
        """Whether the stream ended within ``seconds``."""
        self._thread.join(seconds)
        return not self._thread.is_alive()


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def wait_until_answering(url: str, process: subprocess.Popen[bytes], seconds: float = 60) -> None:
    """Poll ``url`` until it answers 2xx; fail if ``process`` dies or time runs out."""
    deadline = time.monotonic() + seconds
    while True:
        try:
            httpx.get(url).raise_for_status()
            return
        except httpx.TransportError:
            assert process.poll() is None, f"the process serving {url} exited"
            assert time.monotonic() < deadline, f"{url} did not answer within {seconds}s"
            time.sleep(0.1)


def start_serve(
    *options: str, log: Path, env: dict[str, str] | None = None, prefix: Sequence[str] = ()
) -> tuple[subprocess.Popen[bytes], str]:
    """A ``responsa serve`` process with ``options`` (and ``env`` added to the environment) on a free
    port, answering; and its URL. Its output goes to ``log``; the caller stops it. ``prefix`` is a
    command that runs it (and ends by exec'ing it). A new SQLite file that ``--db`` names starts
    migrated, as ``serve``'s do."""
    if "--db" in options:
        seed(options[options.index("--db") + 1])
    port = free_port()
    command = [*prefix, sys.executable, "-m", "responsa.cli", "serve", "--port", str(port), *options]
    with log.open("ab") as sink:
        process = subprocess.Popen(
            command, stdout=sink, stderr=subprocess.STDOUT, env={**os.environ, **SUITE_THREADS_ENV, **(env or {})}
        )
    url = f"http://127.0.0.1:{port}"
    wait_until_answering(f"{url}/health", process)
    return process, url


def serve(settings: Settings) -> _Serving:
    """``with serve(settings) as server:`` runs a real responsa server for the block (a new SQLite
    file starts migrated: see ``tests/migrated.py``)."""
    settings = suite_settings(settings)
    return _Serving(create_app(settings), settings, settings.shutdown_grace_secs)


def serve_app(app: ASGIApp) -> _Serving:
    """``with serve_app(app) as server:`` runs any ASGI app (a mock upstream) on loopback; at the end
    a request it is still answering (a page that never ends) is given a second, as nothing waits on it."""
    return _Serving(app, Settings(), grace=1)


@pytest.fixture(scope="module")
def upstream() -> Iterator[MockUpstream]:
    """A scripted upstream for the module (modules that need other models define their own)."""
    with served_upstream() as mock:
        yield mock


@pytest.fixture(scope="module")
def upstream_live(upstream: MockUpstream, tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveServer]:
    """A live server for the module whose models are the simulator, the embedded default model and ``upstream``."""
    db = f"sqlite:///{tmp_path_factory.mktemp('upstream-live') / 'r.db'}"
    with serve(Settings(db_url=db, upstreams=(upstream.url,))) as server:  # type: ignore[attr-defined]
        yield server


@contextmanager
def served_upstream(*models: str) -> Iterator[MockUpstream]:
    """A scripted Chat Completions upstream on loopback serving ``models``; ``url`` is its ``/v1``."""
    mock = MockUpstream(models=models or ("up-model",))
    with serve_app(mock.app) as live:
        mock.url = f"{live.url}/v1"  # type: ignore[attr-defined]
        yield mock


POSTGRES_ADMIN_URL = os.environ.get("RESPONSA_TEST_POSTGRES", "postgresql://postgres@127.0.0.1:5432/postgres")


def sqlite_server(factory: pytest.TempPathFactory, name: str, **settings: Any) -> Iterator[LiveServer]:
    """A server on a fresh SQLite file, for a module's own ``server`` fixture (``yield from`` it)."""
    db = factory.mktemp(name) / "r.db"
    with serve(Settings(db_url=f"sqlite:///{db}", **settings)) as live:
        yield live


def profiled_server(factory: pytest.TempPathFactory, name: str, profiles: str, **settings: Any) -> Iterator[LiveServer]:
    """``sqlite_server`` with these simulated model profiles (TOML, see docs/simulator.md)."""
    path = factory.mktemp(f"{name}-profiles") / "profiles.toml"
    path.write_text(profiles)
    yield from sqlite_server(factory, name, sim_profiles=path, **settings)


@contextmanager
def fresh_postgres_database() -> Iterator[str]:
    """A new, empty PostgreSQL database for the block (dropped after it).

    Skipped when no server answers, unless RESPONSA_REQUIRE_POSTGRES is set (as CI does).
    """
    import asyncpg

    name = f"responsa_test_{secrets.token_hex(6)}"
    admin = POSTGRES_ADMIN_URL

    async def run(statement: str) -> None:
        conn = await asyncpg.connect(admin)
        try:
            await conn.execute(statement)
        finally:
            await conn.close()

    try:
        anyio.run(run, f"CREATE DATABASE {name}")
    except (OSError, asyncpg.PostgresError) as exc:
        if os.environ.get("RESPONSA_REQUIRE_POSTGRES"):
            raise
        pytest.skip(f"no PostgreSQL at {admin}: {exc}")
    try:
        yield admin.rsplit("/", 1)[0] + f"/{name}"
    finally:
        anyio.run(run, f"DROP DATABASE {name} WITH (FORCE)")


@pytest.fixture(scope="session")
def postgres_url() -> Iterator[str]:
    """A fresh PostgreSQL database for this test session (dropped at the end)."""
    with fresh_postgres_database() as url:
        yield url


@contextmanager
def fresh_store(kind: str, directory: Path) -> Iterator[str]:
    """The URL of an empty store of ``kind``: a new SQLite file in ``directory``, or a new PostgreSQL database."""
    if kind == "sqlite":
        yield f"sqlite:///{directory / 'fresh.db'}"
    else:
        with fresh_postgres_database() as url:
            yield url


@pytest.fixture(params=["sqlite", "postgresql"])
def fresh_db_url(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    """An empty store of each kind for one test."""
    with fresh_store(request.param, tmp_path) as url:
        yield url


def store_contains(db_url: str, needle: str) -> bool:
    """Whether ``needle`` appears anywhere the store keeps data (SQLite files, or PostgreSQL tables)."""
    if db_url.startswith("sqlite:///"):
        database = Path(db_url.removeprefix("sqlite:///"))
        files = list(database.parent.glob(database.name + "*"))
        assert files, f"no database files for {db_url}"
        return any(needle.encode() in path.read_bytes() for path in files)
    import asyncpg

    async def search() -> bool:
        conn = await asyncpg.connect(db_url)
        try:
            for table in ("responses", "response_items", "response_events", "conversations", "conversation_items"):
                rows = await conn.fetch(f"SELECT 1 FROM {table} t WHERE strpos(t::text, $1) > 0 LIMIT 1", needle)
                if rows:
                    return True
            return False
        finally:
            await conn.close()

    return anyio.run(search)


@pytest.fixture(scope="session", params=["sqlite", "postgresql"])
def server(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveServer]:
    """A responsa server on each store: every test using it runs against SQLite and PostgreSQL. Its
    simulated models answer without their latency profiles (``sim_latency``: tests of the profiles
    and of timing serve their own)."""
    with serve(Settings(db_url=session_store_url(request, tmp_path_factory, "db"), sim_latency=False)) as live:
        yield live


@pytest.fixture
def client(server: LiveServer) -> Iterator[openai.OpenAI]:
    with openai.OpenAI(base_url=server.v1, api_key="unused", max_retries=0) as sdk:
        yield sdk


@pytest.fixture
def http(server: LiveServer) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=server.url, timeout=30) as raw:
        yield raw


@pytest.fixture
def db_path(tmp_path: Path) -> Path:
    return tmp_path / "responsa.db"


LONG_TIMEOUT = 300
"""A test given this long a timeout says it runs long (the fuzzer, the embedded model under Codex)."""


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """The longest files first, so that the two processes' last minutes are short files, not one long
    one (``--dist loadfile`` hands out files in this order, as ``--no-loadscope-reorder`` in
    pyproject.toml keeps it: xdist's own order, by the number of tests in a file, handed out the fuzzer
    and Codex's file last): files holding a test with a long timeout, then the whole-server suites at
    the top of tests/ (real clients, crashes, processes), then the rest, each group's files by their
    number of tests, most first."""

    def group(item: pytest.Item) -> int:
        return 2 if item.path.parent.name != "tests" else 1

    long_files = {item.path for item in items if any(
        mark.args and mark.args[0] >= LONG_TIMEOUT for mark in item.iter_markers("timeout"))}  # fmt: skip
    tests_in = Counter(item.path for item in items)
    items.sort(key=lambda item: (0 if item.path in long_files else group(item), -tests_in[item.path], str(item.path)))
