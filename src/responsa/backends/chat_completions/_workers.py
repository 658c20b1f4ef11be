"""Workers serving one model: health, load, and the order in which to try them."""

from __future__ import annotations

import hashlib
import itertools
import time
from dataclasses import dataclass, field
from typing import Literal

__all__ = ["Strategy", "Worker", "WorkerPool"]

Strategy = Literal["least_busy", "round_robin"]


@dataclass
class Worker:
    """One upstream base URL (``http://host:port/v1``)."""

    url: str
    healthy: bool = True
    in_flight: int = 0
    failures: int = 0
    down_since: float | None = None
    latency: float | None = None
    """Seconds its last health check took to answer."""

    def mark_down(self) -> None:
        self.healthy = False
        self.failures += 1
        self.down_since = self.down_since or time.monotonic()

    def mark_up(self) -> None:
        self.healthy = True
        self.down_since = None


@dataclass
class WorkerPool:
    """Picks healthy workers by strategy. A worker that fails is skipped until a health check passes."""

    workers: list[Worker]
    strategy: Strategy = "least_busy"
    _turn: itertools.count[int] = field(default_factory=itertools.count)

    @classmethod
    def of(cls, urls: list[str], strategy: Strategy = "least_busy") -> WorkerPool:
        return cls([Worker(url.rstrip("/")) for url in urls], strategy)

    def candidates(self, cache_key: str | None = None) -> list[Worker]:
        """Healthy workers, best first; the request tries them in this order until one answers. With a
        ``cache_key`` (``prompt_cache_key``) the worker the key hashes to comes first (rendezvous
        hashing: a key keeps its worker while others come and go), so its prefix cache is reused."""
        healthy = [worker for worker in self.workers if worker.healthy]
        if self.strategy == "round_robin" and healthy:
            start = next(self._turn) % len(healthy)
            ordered = healthy[start:] + healthy[:start]
        else:
            ordered = sorted(healthy, key=lambda worker: worker.in_flight)
        if cache_key is not None and len(ordered) > 1:
            home = max(ordered, key=lambda worker: _affinity(cache_key, worker.url))
            ordered.remove(home)
            ordered.insert(0, home)
        return ordered

    @property
    def any_healthy(self) -> bool:
        return any(worker.healthy for worker in self.workers)


def _affinity(key: str, url: str) -> bytes:
    """The rendezvous weight of ``url`` for ``key``: the highest holds the key."""
    return hashlib.blake2b(f"{key}\n{url}".encode(), digest_size=8).digest()
