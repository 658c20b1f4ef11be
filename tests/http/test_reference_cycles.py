"""A request leaves no reference cycle holding its ASGI scope. The server collects cyclic garbage
rarely (cli.py tunes the collector for a long-running server), so a cycle per request would hold
every request's objects (scope, server cycle, buffers) until then: memory that grows with load."""

from __future__ import annotations

import gc
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from tests.conftest import LiveServer, sqlite_server


@pytest.fixture(scope="module")
def live(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveServer]:
    yield from sqlite_server(tmp_path_factory, "cycles")


def _scopes_in_cycles() -> list[dict[str, Any]]:
    """The ASGI HTTP scopes that only the cyclic garbage collector would free."""
    gc.set_debug(gc.DEBUG_SAVEALL)
    try:
        gc.collect()
        return [
            found for found in gc.garbage if isinstance(found, dict) and found.get("type") == "http" and "asgi" in found
        ]
    finally:
        gc.set_debug(0)
        gc.garbage.clear()


def test_json_and_streamed_requests_leave_no_scope_in_a_cycle(live: LiveServer) -> None:
    body = {"model": "sim", "input": "Tell me about rivers", "max_output_tokens": 8}
    gc.disable()
    try:
        gc.collect()
        with httpx.Client(base_url=live.v1, timeout=30) as http:
            for _ in range(3):
                assert http.post("/responses", json=body).status_code == 200
                with http.stream("POST", "/responses", json={**body, "stream": True}) as reply:
                    assert reply.status_code == 200
                    reply.read()
                assert http.get("/models").status_code == 200
        assert _scopes_in_cycles() == []
    finally:
        gc.enable()
