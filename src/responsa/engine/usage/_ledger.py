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


@dataclass(slots=True)
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


_Bucket = tuple[int, str, str, str, str, bool]
"""A minute's start, the tenant, the key id, the model, the kind, batch or not."""

_TOTALS = 7
"""A pending bucket's counts: requests, errors, input, output and cached tokens, units, latency (ms),
then the latency histogram's."""


class UsageLedger:
    """Usage not yet written, by minute (rolled up by hour and day as it is written); ``flush`` writes it."""

    def __init__(self, clock: Callable[[], float] = time.time) -> None:
        self._clock = clock
        self._store: UsageRepository | None = None
        self._pending: dict[_Bucket, list[int]] = {}
        self._pruned = 0.0

    def attach(self, store: UsageRepository) -> None:
        self._store = store

    def record(self, tenant: str, used: Used) -> None:
        """Count ``used`` for ``tenant`` (and the caller's key, batch or not) in this minute."""
        now = int(self._clock())
        bucket = (now - now % 60, tenant, CALLER_KEY.get() or "", used.model, used.kind, IN_BATCH.get())
        counts = self._pending.get(bucket)
        if counts is None:
            counts = self._pending[bucket] = [0] * (_TOTALS + len(LATENCY_BOUNDS_MS) + 1)
        counts[0] += 1
        counts[1] += used.error
        counts[2] += used.input_tokens
        counts[3] += used.output_tokens
        counts[4] += used.cached_tokens
        counts[5] += used.units
        if used.latency_ms is not None:
            counts[6] += used.latency_ms
            counts[_TOTALS + bisect_left(LATENCY_BOUNDS_MS, used.latency_ms)] += 1

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
        pending, self._pending = self._pending, {}
        try:
            await self._store.add_usage(_rolled_up(pending))
        except BaseException:
            for bucket, counts in pending.items():  # counted again next time, with what came meanwhile
                kept = self._pending.setdefault(bucket, [0] * len(counts))
                kept[:] = [a + b for a, b in zip(kept, counts, strict=True)]
            raise
        await self._prune()

    async def _prune(self) -> None:
        """Once an hour: drop the minute and hour buckets past what the Admin API asks for."""
        now = self._clock()
        if self._store is None or now - self._pruned < 3600:
            return
        self._pruned = now
        for width, kept in _KEEP.items():
            await self._store.prune_usage(width, int(now) - kept)


def _rolled_up(pending: Mapping[_Bucket, list[int]]) -> list[UsageRow]:
    """The minutes' counts as rows of every width (a minute's hour and day get its counts too)."""
    rows: dict[tuple[str, int, str, str, str, str, bool], UsageRow] = {}
    for (minute, tenant, key_id, model, kind, batch), counts in pending.items():
        for width, seconds in WIDTHS.items():
            key = (width, minute - minute % seconds, tenant, key_id, model, kind, batch)
            row = rows.get(key)
            if row is None:
                row = rows[key] = UsageRow(*key, latency=[0] * (len(counts) - _TOTALS))
            row.requests += counts[0]
            row.errors += counts[1]
            row.input_tokens += counts[2]
            row.output_tokens += counts[3]
            row.cached_tokens += counts[4]
            row.units += counts[5]
            row.latency_ms += counts[6]
            row.latency = [a + b for a, b in zip(row.latency, counts[_TOTALS:], strict=True)]
    return list(rows.values())
