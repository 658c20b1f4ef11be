"""Workers serving one model: health, load, and the order in which to try them."""

from __future__ import annotations

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

    def candidates(self) -> list[Worker]:
        """Healthy workers, best first; the request tries them in this order until one answers."""
        healthy = [worker for worker in self.workers if worker.healthy]
        if self.strategy == "round_robin" and healthy:
            start = next(self._turn) % len(healthy)
            return healthy[start:] + healthy[:start]
        return sorted(healthy, key=lambda worker: worker.in_flight)

    @property
    def any_healthy(self) -> bool:
        return any(worker.healthy for worker in self.workers)
