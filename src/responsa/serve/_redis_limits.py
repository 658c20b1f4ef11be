"""Rate limits shared by every replica: each tenant's token buckets live in Redis and are checked and
updated by one Lua script, atomically, on Redis's own clock (so replicas' clocks do not matter).

If Redis cannot be reached, requests are still served by this process's own buckets (fail open,
the default) or refused with 503 (``--redis-fail-closed``); the log says so once per outage, and
Redis is tried again a second later.
"""

from __future__ import annotations

import logging
import time
from typing import Any

import redis.asyncio as redis
from redis.exceptions import RedisError

from responsa.config import ApiKey
from responsa.http import RateLimiter, refusal
from responsa.protocol import Capability, ServiceUnavailable, failure_of

__all__ = ["RedisRateLimiter"]

logger = logging.getLogger(__name__)

RETRY_AFTER_OUTAGE = 1.0
"""Seconds to serve without Redis after a failure before trying it again."""

# KEYS: the tenant's request bucket, its token bucket. ARGV: request capacity, token capacity (0: no
# limit), tokens to spend (-1: admit a request instead). Returns {1} or {0, "requests"|"tokens", wait}.
BUCKETS = """
local t = redis.call('TIME')
local now = tonumber(t[1]) + tonumber(t[2]) / 1000000
local function level(key, capacity)
  local state = redis.call('HMGET', key, 'level', 'updated')
  local value = tonumber(state[1]) or capacity
  local updated = tonumber(state[2]) or now
  return math.min(capacity, value + (now - updated) * capacity / 60)
end
local function put(key, value)
  redis.call('HSET', key, 'level', tostring(value), 'updated', tostring(now))
  redis.call('EXPIRE', key, 120)
end
local function wait(value, capacity)
  return math.max(1, math.ceil((1 - value) * 60 / capacity))
end
local requests_cap, tokens_cap, spend = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3])
if spend >= 0 then
  if tokens_cap > 0 then put(KEYS[2], level(KEYS[2], tokens_cap) - spend) end
  return {1}
end
if tokens_cap > 0 then
  local tokens = level(KEYS[2], tokens_cap)
  if tokens < 1 then return {0, 'tokens', wait(tokens, tokens_cap)} end
end
if requests_cap > 0 then
  local requests = level(KEYS[1], requests_cap)
  if requests < 1 then return {0, 'requests', wait(requests, requests_cap)} end
  put(KEYS[1], requests - 1)
end
return {1}
"""


class RedisRateLimiter:
    """Buckets in Redis, for the whole fleet."""

    def __init__(self, keys: tuple[ApiKey, ...], url: str, fail_open: bool = True) -> None:
        self._limits = {
            key.tenant: (key.requests_per_minute or 0, key.tokens_per_minute or 0)
            for key in keys
            if key.requests_per_minute or key.tokens_per_minute
        }
        self._client = redis.Redis.from_url(url, socket_timeout=0.5, socket_connect_timeout=0.5)
        self._buckets = self._client.register_script(BUCKETS)
        self._local = RateLimiter(keys)
        self._fail_open = fail_open
        self._down_until = 0.0

    async def admit(self, tenant: str) -> None:
        limits = self._limits.get(tenant)
        if limits is None:
            return
        outcome = await self._run(tenant, limits, -1)
        if outcome is None:  # Redis is away
            if not self._fail_open:
                raise ServiceUnavailable(
                    "Rate limits cannot be checked right now (Redis is unreachable); retry shortly.",
                    code="rate_limiter_unavailable",
                )
            self._local.admit_now(tenant)
        elif not outcome[0]:
            what = outcome[1].decode()
            raise refusal(what, limits[0] if what == "requests" else limits[1], int(outcome[2]))

    async def spend(self, tenant: str, tokens: int) -> None:
        limits = self._limits.get(tenant)
        if limits is not None and limits[1] and await self._run(tenant, limits, tokens) is None:
            self._local.spend_now(tenant, tokens)

    async def _run(self, tenant: str, limits: tuple[int, int], spend: int) -> list[Any] | None:
        """The script's answer, or None while Redis is unreachable."""
        if time.monotonic() < self._down_until:
            return None
        keys = [f"responsa:limits:{{{tenant}}}:requests", f"responsa:limits:{{{tenant}}}:tokens"]
        try:
            answer: list[Any] = await self._buckets(keys=keys, args=[limits[0], limits[1], spend])
        except (RedisError, OSError) as exc:
            if not self._down_until:
                policy = "open: this process's own limits apply" if self._fail_open else "closed: requests get 503"
                logger.warning("Redis is unreachable for rate limits (%s); failing %s", exc, policy)
            self._down_until = time.monotonic() + RETRY_AFTER_OUTAGE
            return None
        if self._down_until:
            logger.warning("Redis is reachable again; rate limits are fleet-wide again")
            self._down_until = 0.0
        return answer

    async def capability(self) -> Capability | None:
        """Redis answers a PING (the fleet-wide limits); off, requests are admitted by this process's
        own buckets (or refused with ``--redis-fail-closed``) until it answers."""
        fix = "start Redis at --redis's URL, or leave --redis out (limits per process)"
        try:
            await self._client.ping()
        except (RedisError, OSError) as failure:
            return Capability("redis", False, f"Redis does not answer: {failure_of(failure)}", fix, default=False)
        return Capability("redis", True, "fleet-wide rate limits in Redis", default=False)

    async def aclose(self) -> None:
        await self._client.aclose()
