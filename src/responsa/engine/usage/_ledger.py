"""The usage ledger: what each request used, added up in this process by minute, hour and day (a
dictionary update, no I/O on the request path) and written to the store about once a second, each
bucket's counts added to the store's own in one statement (so any number of processes share them).

What a crash loses is what was not written yet: at most ``flush`` seconds of this process's requests
(their responses are stored, but not counted). Whose request it was comes with it: its tenant (a
project), the key it came with (``CALLER_KEY``, which the gate set for the request's task) and
whether it is a batch's line (``IN_BATCH``, set by the batch runner around a line)."""

from __future__ import annotations

import time
from bisect import bisect_left
from collections.abc import Awaitable, Callable, Mapping
from contextvars import ContextVar
from dataclasses import dataclass

from responsa.protocol import ResponseObject
from responsa.store import UsageRepository, UsageRow

from ..projects import CALLER_KEY

__all__ = ["IN_BATCH", "LATENCY_BOUNDS_MS", "WIDTHS", "UsageHook", "UsageLedger", "Used"]

UsageHook = Callable[[str, ResponseObject, Mapping[str, int], int], Awaitable[None]]
"""Told each response as it ends, by tenant, with what its tool calls count and its latency in ms
(the rate limiter's spend, the metrics, the ledger: serve's ``usage_reporter``)."""

IN_BATCH: ContextVar[bool] = ContextVar("responsa_in_batch", default=False)
"""Set by the batch runner while it runs a line: its usage counts as batch."""

WIDTHS = {"1m": 60, "1h": 3600, "1d": 86400}
"""The buckets usage is rolled up by (the Admin API's ``bucket_width`` values), in seconds."""

LATENCY_BOUNDS_MS = (50, 100, 200, 400, 800, 1600, 3200, 6400, 12800, 25600, 51200)
"""Upper bounds of the latency histogram's buckets (a 12th holds the slower ones)."""

_KEEP = {"1m": 2 * 86400, "1h": 35 * 86400}
"""How long minute and hour buckets are kept (the Admin API asks at most 1,440 minutes or 168 hours
back); days are kept as long as the store is."""


@dataclass(frozen=True)
class Used:
    """One request's use of one kind (``completions``, ``embeddings``, ``images``, a tool's calls...)."""

    kind: str
    model: str
    input_tokens: int = 0
    output_tokens: int = 0
    cached_tokens: int = 0
    units: int = 0
    """The kind's own count: images made, tool calls, sessions."""
    error: bool = False
    latency_ms: int | None = None
    """From the request's arrival to its end (None: not timed, as a tool call is not)."""


class UsageLedger:
    """Usage not yet written, by bucket; ``flush`` writes it."""

    def __init__(self, clock: Callable[[], float] = time.time) -> None:
        self._clock = clock
        self._store: UsageRepository | None = None
        self._pending: dict[tuple[str, int, str, str, str, str, bool], UsageRow] = {}
        self._pruned = 0.0

    def attach(self, store: UsageRepository) -> None:
        self._store = store

    def record(self, tenant: str, used: Used) -> None:
        """Count ``used`` for ``tenant`` (and the caller's key, batch or not), in every width."""
        now = int(self._clock())
        key_id, batch = CALLER_KEY.get() or "", IN_BATCH.get()
        latency = None if used.latency_ms is None else bisect_left(LATENCY_BOUNDS_MS, used.latency_ms)
        for width, seconds in WIDTHS.items():
            start = now - now % seconds
            bucket = (width, start, tenant, key_id, used.model, used.kind, batch)
            row = self._pending.get(bucket)
            if row is None:
                row = self._pending[bucket] = UsageRow(*bucket, latency=[0] * (len(LATENCY_BOUNDS_MS) + 1))
            row.requests += 1
            row.errors += used.error
            row.input_tokens += used.input_tokens
            row.output_tokens += used.output_tokens
            row.cached_tokens += used.cached_tokens
            row.units += used.units
            if latency is not None and used.latency_ms is not None:
                row.latency_ms += used.latency_ms
                row.latency[latency] += 1

    def record_response(
        self, tenant: str, response: ResponseObject, metered: Mapping[str, int], latency_ms: int
    ) -> None:
        """A response's use: its tokens as completions (a failed one counts as an error), and what its
        tool calls count (``metered``: by usage kind, as the tool kinds count their items)."""
        usage = response.usage
        tokens = (0, 0, 0) if usage is None else (
            usage.input_tokens, usage.output_tokens, usage.input_tokens_details.cached_tokens)  # fmt: skip
        self.record(tenant, Used("completions", response.model, *tokens, error=response.status == "failed",
                                 latency_ms=latency_ms))  # fmt: skip
        for kind, units in metered.items():
            self.record(tenant, Used(kind, response.model, units=units))

    async def flush(self) -> None:
        """Write what was counted since the last flush; what cannot be written now waits for the next."""
        if self._store is None or not self._pending:
            return
        rows, self._pending = self._pending, {}
        try:
            await self._store.add_usage(list(rows.values()))
        except BaseException:
            for bucket, row in rows.items():  # counted again next time, with what came meanwhile
                self._merge(bucket, row)
            raise
        await self._prune()

    def _merge(self, bucket: tuple[str, int, str, str, str, str, bool], row: UsageRow) -> None:
        kept = self._pending.get(bucket)
        if kept is None:
            self._pending[bucket] = row
            return
        for name in ("requests", "errors", "input_tokens", "output_tokens", "cached_tokens", "units", "latency_ms"):
            setattr(kept, name, getattr(kept, name) + getattr(row, name))
        kept.latency = [a + b for a, b in zip(kept.latency, row.latency, strict=True)]

    async def _prune(self) -> None:
        """Once an hour: drop the minute and hour buckets past what the Admin API asks for."""
        now = self._clock()
        if self._store is None or now - self._pruned < 3600:
            return
        self._pruned = now
        for width, kept in _KEEP.items():
            await self._store.prune_usage(width, int(now) - kept)
