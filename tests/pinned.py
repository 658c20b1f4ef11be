"""Clients pinned to one worker of a ``responsa serve --workers N``: each holds one keep-alive
connection, and every answer on it must come from the worker it was pinned to (``x-responsa-worker``),
so a test that means to cross workers cannot silently stay on one."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass

import httpx
import openai


@dataclass
class Place:
    """One process of a service, as a client reaches it: ``http`` is based at ``/v1``."""

    http: httpx.Client
    worker: str | None = None

    def openai(self, api_key: str = "x") -> openai.OpenAI:
        return openai.OpenAI(base_url=str(self.http.base_url), api_key=api_key, max_retries=0, http_client=self.http)

    @contextmanager
    def another(self) -> Iterator[Place]:
        """A second connection to the same process (a stream read only in part ends its connection)."""
        if self.worker is None:
            with httpx.Client(base_url=self.http.base_url, timeout=60) as http:
                yield Place(http)
            return
        with _pinned(str(self.http.base_url), self.worker, dict(self.http.headers)) as http:
            yield Place(http, self.worker)


def _pinned_to(worker: str) -> Callable[[httpx.Response], None]:
    def check(response: httpx.Response) -> None:
        served = response.headers.get("x-responsa-worker")
        assert served == worker, f"pinned to worker {worker}, answered by {served}: the connection was replaced"

    return check


@contextmanager
def distinct_workers(url: str, count: int = 2, headers: dict[str, str] | None = None) -> Iterator[list[Place]]:
    """``count`` places on distinct workers of the server at ``url`` (its root), found by opening
    connections until that many workers have answered."""
    found: dict[str, httpx.Client] = {}
    try:
        for _ in range(200):
            client = _connection(f"{url}/v1", headers)
            worker = client.get("/models").headers["x-responsa-worker"]
            if worker in found:
                client.close()
                continue
            client.event_hooks["response"] = [_pinned_to(worker)]
            found[worker] = client
            if len(found) == count:
                yield [Place(http, worker) for worker, http in found.items()]
                return
        raise AssertionError(f"only {len(found)} of {count} workers answered 200 connections")
    finally:
        for client in found.values():
            client.close()


@contextmanager
def _pinned(base_url: str, worker: str, headers: dict[str, str]) -> Iterator[httpx.Client]:
    """A connection to ``worker``, found by opening connections until one lands there."""
    for _ in range(200):
        client = _connection(base_url, headers)
        if client.get("/models").headers["x-responsa-worker"] == worker:
            client.event_hooks["response"] = [_pinned_to(worker)]
            try:
                yield client
            finally:
                client.close()
            return
        client.close()
    raise AssertionError(f"no connection of 200 reached worker {worker}")


def _connection(base_url: str, headers: dict[str, str] | None) -> httpx.Client:
    """One connection, kept while idle for a minute (httpx's own 5 s dropped it on a loaded machine,
    and its next one could reach the other worker); the server keeps it for ``--keep-alive-secs``."""
    return httpx.Client(base_url=base_url, headers=headers, timeout=60,
                        limits=httpx.Limits(max_connections=1, max_keepalive_connections=1, keepalive_expiry=60))  # fmt: skip
