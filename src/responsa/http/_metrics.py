"""Prometheus metrics of one app (its own registry: no process-global state)."""

from __future__ import annotations

import re
from collections.abc import Callable

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, generate_latest

__all__ = ["Metrics", "route_of"]

_ID = re.compile(r"/(?:resp|conv|msg|fc|fco|rs|mcp|mcpl|mcpr|call)_[A-Za-z0-9]+")


def route_of(path: str) -> str:
    """The path with object ids replaced, so routes stay a small label set."""
    return _ID.sub("/{id}", path)


class Metrics:
    def __init__(self, backend_health: Callable[[], dict[str, bool]] | None = None) -> None:
        self.registry = CollectorRegistry()
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
        self._backend_health = backend_health

    def count_usage(self, input_tokens: int, output_tokens: int) -> None:
        self.tokens.labels("input").inc(input_tokens)
        self.tokens.labels("output").inc(output_tokens)

    def render(self) -> bytes:
        if self._backend_health is not None:
            for url, healthy in self._backend_health().items():
                self.worker_up.labels(url).set(1 if healthy else 0)
        return generate_latest(self.registry)
