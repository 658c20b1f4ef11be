"""The usage repository: what requests used, rolled up by bucket (minute, hour, day) as it is added,
and read back summed over a time range, grouped by the dimensions asked for."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Protocol

__all__ = ["USAGE_DIMENSIONS", "USAGE_TOTALS", "UsageFilter", "UsageRepository", "UsageRow"]

USAGE_DIMENSIONS = ("project_id", "api_key_id", "model", "batch", "kind")
"""What a query may group by (besides the bucket)."""

USAGE_TOTALS = ("requests", "errors", "input_tokens", "output_tokens", "cached_tokens", "units", "latency_ms")


@dataclass
class UsageRow:
    """One bucket's sums for one project, key, model, kind and batch-or-not (``latency``: counts of
    requests by latency bucket, the engine's bounds)."""

    width: str
    start: int
    project_id: str
    api_key_id: str
    model: str
    kind: str
    batch: bool
    requests: int = 0
    errors: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    cached_tokens: int = 0
    units: int = 0
    latency_ms: int = 0
    latency: list[int] = field(default_factory=list)


@dataclass(frozen=True)
class UsageFilter:
    """Which rows a query reads: one width and kind (or several kinds), a time range (bucket starts
    ``start`` <= s < ``end``), and optional lists of projects, keys and models, and batch or not."""

    width: str
    kinds: Sequence[str]
    start: int
    end: int
    project_ids: Sequence[str] = ()
    api_key_ids: Sequence[str] = ()
    models: Sequence[str] = ()
    batch: bool | None = None


class UsageRepository(Protocol):
    async def add_usage(self, rows: Sequence[UsageRow]) -> None:
        """Add each row's counts to its bucket's (made if new), in one transaction."""
        ...

    async def usage(self, wanted: UsageFilter, group_by: Sequence[str]) -> list[UsageRow]:
        """The buckets' sums, by bucket start and the ``group_by`` dimensions (the others summed over:
        empty in the rows; ``kind``, the filter's kinds joined by commas), ordered by start."""
        ...

    async def prune_usage(self, width: str, before: int) -> int:
        """Drop the buckets of ``width`` that start before ``before`` (minutes and hours are kept a while)."""
        ...
