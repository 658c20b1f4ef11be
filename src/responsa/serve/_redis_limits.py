"""Rate limits shared by every replica: each scope's token buckets (a tenant's, or a project's for one
model) live in Redis and are checked and updated by one Lua script, atomically, on Redis's own clock
(so replicas' clocks do not matter).

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

from responsa.engine.projects import LimitTable, RateLimits
from responsa.http import KINDS, RateLimiter, buckets, capacities, refusal
from responsa.protocol import Capability, ServiceUnavailable, failure_of

__all__ = ["RedisRateLimiter"]

logger = logging.getLogger(__name__)

RETRY_AFTER_OUTAGE = 1.0
"""Seconds to serve without Redis after a failure before trying it again."""

# KEYS: the scope's buckets, one per kind (``KINDS``). ARGV: each kind's capacity (0: no limit) and
# period, then the tokens to spend (-1: admit a request instead). Returns {1} or {0, kind index, wait}.
BUCKETS = """
local t = redis.call('TIME')
local now = tonumber(t[1]) + tonumber(t[2]) / 1000000
local kinds = #KEYS
local spend = tonumber(ARGV[2 * kinds + 1])
local function level(i)
  local capacity, period = tonumber(ARGV[2 * i - 1]), tonumber(ARGV[2 * i])
  local state = redis.call('HMGET', KEYS[i], 'level', 'updated')
  local value = tonumber(state[1]) or capacity
  local updated = tonumber(state[2]) or now
  return math.min(capacity, value + (now - updated) * capacity / period)
end
local function put(i, value)
  redis.call('HSET', KEYS[i], 'level', tostring(value), 'updated', tostring(now))
  redis.call('EXPIRE', KEYS[i], math.ceil(2 * tonumber(ARGV[2 * i])))
end
if spend >= 0 then
  if tonumber(ARGV[1]) > 0 then put(1, level(1) - spend) end
  return {1}
end
local levels = {}
for i = 1, kinds do
  local capacity = tonumber(ARGV[2 * i - 1])
  if capacity > 0 then
    levels[i] = level(i)
    if levels[i] < 1 then
      return {0, i - 1, math.max(1, math.ceil((1 - levels[i]) * tonumber(ARGV[2 * i]) / capacity))}
    end
  end
end
for i = 2, kinds do
  if levels[i] then put(i, levels[i] - 1) end
end
return {1}
"""


class RedisRateLimiter:
    """Buckets in Redis, for the whole fleet."""

    def __init__(self, table: LimitTable, url: str, fail_open: bool = True) -> None:
        self._table = table
        self._client = redis.Redis.from_url(url, socket_timeout=0.5, socket_connect_timeout=0.5)
        self._buckets = self._client.register_script(BUCKETS)
        self._local = RateLimiter(table)
        self._fail_open = fail_open
        self._down_until = 0.0

    async def admit(self, tenant: str, model: str | None = None) -> None:
        limits = self._table.of(tenant, model)
        if limits is None:
            return
        outcome = await self._run(tenant, model, limits, -1)
        if outcome is None:  # Redis is away
            if not self._fail_open:
                raise ServiceUnavailable(
                    "Rate limits cannot be checked right now (Redis is unreachable); retry shortly.",
                    code="rate_limiter_unavailable",
                )
            self._local.admit_now(tenant, model)
        elif not outcome[0]:
            kind = int(outcome[1])
            capacity = next(capacity for index, _, capacity, _ in capacities(limits) if index == kind)
            raise refusal(KINDS[kind], capacity, int(outcome[2]), model)

    async def spend(self, tenant: str, tokens: int, model: str | None = None) -> None:
        limits = self._table.of(tenant, model)
        if limits is not None and limits.tokens_per_minute and await self._run(tenant, model, limits, tokens) is None:
            self._local.spend_now(tenant, tokens, model)

    async def _run(self, tenant: str, model: str | None, limits: RateLimits, spend: int) -> list[Any] | None:
        """The script's answer, or None while Redis is unreachable."""
        if time.monotonic() < self._down_until:
            return None
        scope = f"responsa:limits:{{{tenant}}}" + ("" if model is None else f":model:{model}")
        keys = [f"{scope}:tokens", f"{scope}:requests", f"{scope}:requests_per_day"]
        args = [*(value for bucket in buckets(limits) for value in bucket), spend]
        try:
            answer: list[Any] = await self._buckets(keys=keys, args=args)
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
