"""Prometheus metrics of one app (its own registry: no process-global state). The workers of one server
each count in their own and publish it to a directory they share; whichever answers ``/metrics`` sums
them all (``_metrics_sum``)."""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, generate_latest

from responsa.backends import WorkerState

from ._metrics_sum import SummedWorkers, publish

__all__ = ["Metrics", "route_of"]

_ID = re.compile(r"/(?:(?:resp|conv|msg|fc|fco|rs|mcp|mcpl|mcpr|call)_|file-)[A-Za-z0-9]+")


def route_of(path: str) -> str:
    """The path with object ids replaced, so routes stay a small label set."""
    return _ID.sub("/{id}", path)


class Metrics:
    def __init__(self, workers: Callable[[], list[WorkerState]] | None = None, shared: Path | None = None) -> None:
        self.registry = CollectorRegistry()
        self.shared = shared
        """The workers' shared directory of published counts (None: this process alone)."""
        self.requests = Counter(
            "responsa_requests", "HTTP requests served", ["method", "route", "status"], registry=self.registry
        )
        self.latency = Histogram(
            "responsa_request_seconds", "Time to the end of each HTTP response", ["route"], registry=self.registry
        )
        self.tokens = Counter("responsa_tokens", "Tokens processed", ["kind"], registry=self.registry)
        self.active_streams = Gauge("responsa_active_streams", "SSE streams open now", registry=self.registry)
        self.worker_up = Gauge(
            "responsa_backend_worker_up", "1 when an upstream worker takes requests", ["url"], registry=self.registry
        )
        self.generations = Gauge(
            "responsa_generations",
            "Backend slots held now: by requests that took the line, by batch lines and later windows waiting apart",
            ["admitted"],
            registry=self.registry,
        )
        self.waiting = Gauge(
            "responsa_generations_waiting", "Requests in line for a backend slot now", registry=self.registry
        )
        self.workers = workers or list
        self.held: Callable[[], dict[str, int]] = dict
        """The generation slots held now, by how they were taken (set once the engine exists)."""
        self.in_line: Callable[[], int] = int
        """The requests in line for a slot now (set once the engine exists)."""
        self._input_tokens, self._output_tokens = self.tokens.labels("input"), self.tokens.labels("output")
        self._served: dict[tuple[str, str, int], Counter] = {}
        self._latencies: dict[str, Histogram] = {}
        """Each label set's series, looked up once (``labels()`` costs more than counting)."""

    def count_request(self, method: str, route: str, status: int, seconds: float) -> None:
        """One HTTP request answered, with ``status``, in ``seconds``."""
        served = self._served.get((method, route, status))
        if served is None:
            served = self._served[method, route, status] = self.requests.labels(method, route, str(status))
        served.inc()
        latency = self._latencies.get(route)
        if latency is None:
            latency = self._latencies[route] = self.latency.labels(route)
        latency.observe(seconds)

    def count_usage(self, input_tokens: int, output_tokens: int) -> None:
        self._input_tokens.inc(input_tokens)
        self._output_tokens.inc(output_tokens)

    def render(self) -> bytes:
        return generate_latest(self._readable())

    async def publish(self) -> None:
        """Write this worker's counts for the others to sum (every second, and at the end)."""
        if self.shared is not None:
            self._refresh()
            publish(self.registry, self.shared)

    def _refresh(self) -> None:
        for worker in self.workers():
            self.worker_up.labels(worker.url).set(1 if worker.healthy else 0)
        for admitted, held in self.held().items():
            self.generations.labels(admitted).set(held)
        self.waiting.set(self.in_line())

    def _readable(self) -> CollectorRegistry:
        """This process's registry, or one summing every worker's published counts (this one's fresh)."""
        self._refresh()
        if self.shared is None:
            return self.registry
        publish(self.registry, self.shared)
        registry = CollectorRegistry()
        registry.register(SummedWorkers(self.shared))
        return registry

    def totals(self) -> dict[str, Any]:
        """The counters' current values, for the console's server page (it derives rates from two readings)."""
        samples = [sample for family in self._readable().collect() for sample in family.samples]
        by_status: dict[str, float] = {}
        for sample in _named(samples, "responsa_requests_total"):
            status = sample.labels["status"][0] + "xx"
            by_status[status] = by_status.get(status, 0) + sample.value
        tokens = {sample.labels["kind"]: int(sample.value) for sample in _named(samples, "responsa_tokens_total")}
        return {
            "requests": {status: int(count) for status, count in sorted(by_status.items())},
            "tokens": {"input": tokens.get("input", 0), "output": tokens.get("output", 0)},
            "active_streams": int(sum(sample.value for sample in _named(samples, "responsa_active_streams"))),
        }


def _named(samples: list[Any], name: str) -> list[Any]:
    return [sample for sample in samples if sample.name == name]
