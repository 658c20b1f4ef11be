"""What each rate limit allows, read by every limiter on every decision: a tenant's own limits (the
keys file's ``requests_per_minute`` and ``tokens_per_minute``, fixed at start) and a project's limits
per model (the Admin API's ``rate_limits``, changed at runtime: the key directory writes them here
whenever it reads the projects again, so every worker and replica holds them within a poll)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from responsa.config import ApiKey

__all__ = ["DAY", "MINUTE", "LimitTable", "RateLimits"]

MINUTE = 60.0
DAY = 86_400.0


@dataclass(frozen=True, slots=True)
class RateLimits:
    """One scope's limits (0: none): requests and tokens a minute, requests a day."""

    requests_per_minute: int = 0
    tokens_per_minute: int = 0
    requests_per_day: int = 0

    def __bool__(self) -> bool:
        return bool(self.requests_per_minute or self.tokens_per_minute or self.requests_per_day)


class LimitTable:
    """The limits of each tenant, and of each project's models."""

    def __init__(self, keys: Sequence[ApiKey] = ()) -> None:
        self.tenants: dict[str, RateLimits] = {}
        for key in keys:
            limits = RateLimits(key.requests_per_minute or 0, key.tokens_per_minute or 0)
            if limits:
                self.tenants[key.tenant] = limits
        self.models: Mapping[tuple[str, str], RateLimits] = {}
        """By (tenant, model); replaced whole when the projects are read again."""

    def of(self, tenant: str, model: str | None = None) -> RateLimits | None:
        """The tenant's limits (``model`` None), or its project's for ``model``; None where unlimited."""
        if model is None:
            return self.tenants.get(tenant)
        return self.models.get((tenant, model)) if self.models else None
