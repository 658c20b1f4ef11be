"""Per-key rate limits: requests per minute and tokens per minute, as token buckets.

``RateLimiter`` keeps the buckets in this process; the workers of one machine share them in a file
(``SharedRateLimiter``, ``_shared_limits``); with Redis, ``RedisRateLimiter`` (``_redis_limits``) keeps
them there, so the whole fleet shares one limit. A
key's bucket refills continuously and a request is refused while its bucket is empty, with
``retry-after`` saying when it will not be.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass
from typing import Protocol

from responsa.config import ApiKey
from responsa.protocol import Capability, RateLimited

__all__ = ["Bucket", "Limiter", "RateLimiter", "refusal"]


class Limiter(Protocol):
    """``admit`` before a request; ``spend`` the tokens a response used once it ends."""

    async def admit(self, tenant: str) -> None: ...

    async def spend(self, tenant: str, tokens: int) -> None: ...

    async def capability(self) -> Capability | None:
        """What a service the limits live in answers at start (None: nothing outside the process)."""

    async def aclose(self) -> None: ...


@dataclass
class Bucket:
    """A token bucket: full at ``capacity``, refilling it each minute."""

    capacity: float
    level: float
    updated: float

    def refill(self, now: float) -> None:
        rate = self.capacity / 60
        self.level = min(self.capacity, self.level + (now - self.updated) * rate)
        self.updated = now

    def seconds_until_positive(self) -> int:
        return max(1, math.ceil((1 - self.level) * 60 / self.capacity)) if self.level < 1 else 0


class RateLimiter:
    """Buckets in this process."""

    def __init__(self, keys: tuple[ApiKey, ...]) -> None:
        now = time.monotonic()
        self.requests = {
            key.tenant: Bucket(key.requests_per_minute, key.requests_per_minute, now)
            for key in keys
            if key.requests_per_minute
        }
        self.tokens = {
            key.tenant: Bucket(key.tokens_per_minute, key.tokens_per_minute, now)
            for key in keys
            if key.tokens_per_minute
        }

    async def admit(self, tenant: str) -> None:
        """Let a request through, or 429 while the tenant's token or request bucket is empty."""
        self.admit_now(tenant)

    def admit_now(self, tenant: str) -> None:
        now = time.monotonic()
        _check(self.tokens.get(tenant), "tokens", now)
        requests = self.requests.get(tenant)
        _check(requests, "requests", now)
        if requests is not None:
            requests.level -= 1

    async def spend(self, tenant: str, tokens: int) -> None:
        self.spend_now(tenant, tokens)

    def spend_now(self, tenant: str, tokens: int) -> None:
        bucket = self.tokens.get(tenant)
        if bucket is not None:
            bucket.refill(time.monotonic())
            bucket.level -= tokens

    async def capability(self) -> Capability | None:
        return None

    async def aclose(self) -> None:
        return None


def refusal(what: str, capacity: int, wait: int) -> RateLimited:
    """The 429 for an empty bucket."""
    return RateLimited(
        f"Rate limit reached: {what} per minute ({capacity}). Retry in {wait}s.",
        code="rate_limit_exceeded",
        headers={"retry-after": str(wait)},
    )


def _check(bucket: Bucket | None, what: str, now: float) -> None:
    if bucket is None:
        return
    bucket.refill(now)
    if bucket.level < 1:
        raise refusal(what, int(bucket.capacity), bucket.seconds_until_positive())
