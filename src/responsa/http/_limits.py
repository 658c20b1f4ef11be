"""Rate limits: requests and tokens per minute and requests per day, as token buckets, for each tenant
(the keys file's limits, checked by the gate) and each project's model (the Admin API's
``rate_limits``, checked where a request names its model); ``LimitTable`` says what each allows.

``RateLimiter`` keeps the buckets in this process; the workers of one machine share them in a file
(``SharedRateLimiter``, ``_shared_limits``); with Redis, ``RedisRateLimiter`` (``_redis_limits``) keeps
them there, so the whole fleet shares one limit. A bucket refills continuously over its period and a
request is refused while one of its buckets is empty, with ``retry-after`` saying when it will not be.
"""

from __future__ import annotations

import math
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

import anyio

from responsa.engine.projects import DAY, MINUTE, KeyDirectory, LimitTable, RateLimits
from responsa.protocol import Capability, RateLimited

__all__ = ["KINDS", "Bucket", "Limiter", "Permits", "RateLimiter", "admitted", "buckets", "capacities", "refusal"]

KINDS = ("tokens per minute", "requests per minute", "requests per day")
"""A scope's buckets, in the order they are checked (and laid out in the workers' file)."""


class Limiter(Protocol):
    """``admit`` before a request (``model``: its project's limits for the model, once it is known);
    ``spend`` the tokens a response used once it ends."""

    async def admit(self, tenant: str, model: str | None = None) -> None: ...

    async def spend(self, tenant: str, tokens: int, model: str | None = None) -> None: ...

    async def capability(self) -> Capability | None:
        """What a service the limits live in answers at start (None: nothing outside the process)."""

    async def aclose(self) -> None: ...


@dataclass
class Bucket:
    """A token bucket: full at ``capacity``, refilling it each ``period`` seconds."""

    capacity: float
    level: float
    updated: float
    period: float = MINUTE

    def refill(self, now: float) -> None:
        rate = self.capacity / self.period
        self.level = min(self.capacity, self.level + (now - self.updated) * rate)
        self.updated = now

    def seconds_until_positive(self) -> int:
        return max(1, math.ceil((1 - self.level) * self.period / self.capacity)) if self.level < 1 else 0


def buckets(limits: RateLimits) -> tuple[tuple[int, float], ...]:
    """A scope's buckets in ``KINDS``' order: (capacity, 0 for none; period in seconds)."""
    return ((limits.tokens_per_minute, MINUTE), (limits.requests_per_minute, MINUTE), (limits.requests_per_day, DAY))


def capacities(limits: RateLimits) -> tuple[tuple[int, str, int, float], ...]:
    """The limited buckets of a scope: (index in ``KINDS``, kind, capacity, period)."""
    return tuple((index, KINDS[index], capacity, period)
                 for index, (capacity, period) in enumerate(buckets(limits)) if capacity)  # fmt: skip


class RateLimiter:
    """Buckets in this process."""

    def __init__(self, table: LimitTable) -> None:
        self.table = table
        self.buckets: dict[tuple[str, str | None, int], Bucket] = {}

    def scope(self, tenant: str, model: str | None) -> list[tuple[int, Bucket]] | None:
        """The scope's buckets by kind (made full when first used, and held to a changed capacity);
        None where it has no limits."""
        limits = self.table.of(tenant, model)
        if limits is None:
            return None
        now, found = time.monotonic(), []
        for index, _kind, capacity, period in capacities(limits):
            bucket = self.buckets.get((tenant, model, index))
            if bucket is None:
                bucket = self.buckets[tenant, model, index] = Bucket(capacity, capacity, now, period)
            elif bucket.capacity != capacity:
                bucket.capacity, bucket.level = capacity, min(bucket.level, capacity)
            found.append((index, bucket))
        return found

    async def admit(self, tenant: str, model: str | None = None) -> None:
        """Let a request through, or 429 while one of the scope's buckets is empty."""
        self.admit_now(tenant, model)

    def admit_now(self, tenant: str, model: str | None = None) -> None:
        decide(self.scope(tenant, model), model)

    async def spend(self, tenant: str, tokens: int, model: str | None = None) -> None:
        self.spend_now(tenant, tokens, model)

    def spend_now(self, tenant: str, tokens: int, model: str | None = None) -> None:
        spend(self.scope(tenant, model), tokens)

    async def capability(self) -> Capability | None:
        return None

    async def aclose(self) -> None:
        return None


def decide(buckets: list[tuple[int, Bucket]] | None, model: str | None) -> None:
    """Take one request from each request bucket, or 429 (taking nothing) where any is empty."""
    if not buckets:
        return
    now = time.monotonic()
    for index, bucket in buckets:
        bucket.refill(now)
        if bucket.level < 1:
            raise refusal(KINDS[index], int(bucket.capacity), bucket.seconds_until_positive(), model)
    for index, bucket in buckets:
        if index:  # the request buckets; tokens are spent when the response ends
            bucket.level -= 1


def spend(buckets: list[tuple[int, Bucket]] | None, tokens: int) -> None:
    for index, bucket in buckets or ():
        if not index:
            bucket.refill(time.monotonic())
            bucket.level -= tokens


async def admitted(limiter: Limiter, tenant: str, patience: float, model: str | None = None) -> None:
    """Wait until the scope's limits let one more request through, for ``patience`` seconds at most
    (0: answer at once): a batch line waits its turn instead of failing."""
    deadline = time.monotonic() + patience
    while True:
        try:
            await limiter.admit(tenant, model)
            return
        except RateLimited as refused:
            pause = float(refused.headers.get("retry-after", "1"))
            if time.monotonic() + pause > deadline:
                raise
            await anyio.sleep(pause)


class Permits:
    """What a request that names its model passes once it is read: its project's permissions (the key
    directory's ``check``), then its project's rate limits for the model."""

    def __init__(self, keys: KeyDirectory, limiter: Limiter) -> None:
        self._keys = keys
        self._limiter = limiter

    async def __call__(
        self, tenant: str, model: str | None, tool_types: Sequence[str] = (), patience: float = 0.0
    ) -> None:
        self._keys.check(tenant, model, tool_types)
        if model is not None and self._keys.limits.of(tenant, model) is not None:
            await admitted(self._limiter, tenant, patience, model)


def refusal(kind: str, capacity: int, wait: int, model: str | None = None) -> RateLimited:
    """The 429 for an empty bucket (``model``: a project's limit for it)."""
    scope = f" for {model}" if model else ""
    return RateLimited(
        f"Rate limit reached{scope}: {kind} ({capacity}). Retry in {wait}s.",
        code="rate_limit_exceeded",
        headers={"retry-after": str(wait)},
    )
