"""The in-process seam: the app served without a socket, for tests that need no network.

``in_process(settings)`` runs ``create_app(settings)`` with its lifespan (the builders, the server's
tasks) in a thread of its own (Starlette's ``TestClient``: an ``httpx.Client`` whose transport calls
the app's ASGI interface through an anyio portal) and gives an httpx client and an openai client on
it. A stream's body is read whole before the reply returns, so tests that act while a stream runs
(cancel it, disconnect, read its first events) keep a live server (``tests.conftest.serve``), as do
WebSocket, workers, crashes and the real clients.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass

import httpx
import openai
import pytest
from starlette.testclient import TestClient

from responsa.backends import Backend
from responsa.config import Settings
from responsa.serve import create_app
from tests.migrated import seed
from tests.suite_threads import with_suite_threads

__all__ = [
    "InProcess",
    "app_client",
    "app_http",
    "in_process",
    "in_process_app",
    "in_process_client",
    "in_process_http",
    "session_store_url",
    "suite_settings",
]

BASE = "http://responsa.test"


@dataclass
class InProcess:
    """The app in this process: raw HTTP and the SDK over it, and the settings it runs with."""

    http: httpx.Client
    sdk: openai.OpenAI
    settings: Settings


def suite_settings(settings: Settings) -> Settings:
    """``settings`` as the suite serves them in a test process (``in_process``, ``tests.conftest.serve``):
    a new SQLite file made migrated (``tests/migrated.py``), the embedded models on one decode thread
    (``tests/suite_threads.py``)."""
    seed(settings.db_url)
    return with_suite_threads(settings)


@contextmanager
def in_process(settings: Settings, backends: Sequence[Backend] = ()) -> Iterator[InProcess]:
    """``create_app(settings, backends=backends)`` served in this process for the block, its lifespan
    run at both ends (``backends``: a test's own, such as ``tests.scripted.ScriptedBackend``); a new
    SQLite file starts migrated (see ``tests/migrated.py``)."""
    settings = suite_settings(settings)
    with TestClient(create_app(settings, backends=backends), base_url=BASE, raise_server_exceptions=False) as http:
        sdk = openai.OpenAI(base_url=f"{BASE}/v1", api_key="-", http_client=http, max_retries=0)
        yield InProcess(http, sdk, settings)


def session_store_url(request: pytest.FixtureRequest, factory: pytest.TempPathFactory, name: str) -> str:
    """The store of a session fixture parametrized by store kind: a new SQLite file, or the session's
    PostgreSQL database."""
    if request.param == "sqlite":
        return f"sqlite:///{factory.mktemp(name) / 'responsa.db'}"
    return str(request.getfixturevalue("postgres_url"))


@pytest.fixture(scope="session", params=["sqlite", "postgresql"])
def in_process_app(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[InProcess]:
    """A responsa app in this process on each store, shared by the session (as ``server`` is, and as
    it without the simulated models' latency)."""
    settings = Settings(db_url=session_store_url(request, tmp_path_factory, "in-process"), sim_latency=False)
    with in_process(settings) as app:
        yield app


@pytest.fixture
def app_client(in_process_app: InProcess) -> openai.OpenAI:
    """The openai SDK on the in-process app."""
    return in_process_app.sdk


@pytest.fixture
def app_http(in_process_app: InProcess) -> httpx.Client:
    """Raw HTTP on the in-process app (paths relative to its root)."""
    return in_process_app.http


@pytest.fixture(name="client")
def in_process_client(app_client: openai.OpenAI) -> openai.OpenAI:
    """``client`` as the app in process, for a module that imports it: its tests need no socket."""
    return app_client


@pytest.fixture(name="http")
def in_process_http(app_http: httpx.Client) -> httpx.Client:
    """``http`` as raw HTTP on the app in process, for a module that imports it."""
    return app_http
