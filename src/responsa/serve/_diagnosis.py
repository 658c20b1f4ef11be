"""What ``responsa doctor`` asks the server's own start-up code, without serving: the backends opened
and closed again, every capability probed as a start probes it, and the store's schema read."""

from __future__ import annotations

from contextlib import AsyncExitStack
from dataclasses import dataclass

from responsa.backends import BackendRegistry
from responsa.config import Settings
from responsa.engine.projects import LimitTable
from responsa.protocol import Capability, failure_of
from responsa.store import schema_state

from ._capabilities import probe_capabilities, store_capability
from ._configured import configured_backends, configured_limiter
from ._hosted_setup import search_provider

__all__ = ["Diagnosis", "diagnose"]


@dataclass(frozen=True)
class Diagnosis:
    models: list[str]
    capabilities: list[Capability]

    def off_by_default(self) -> list[str]:
        """The capabilities a default install has on that are off here."""
        return [capability.name for capability in self.capabilities if capability.default and not capability.on]


async def _store(url: str) -> Capability:
    try:
        return store_capability(url, await schema_state(url))
    except Exception as failure:
        return Capability(
            "store", False, f"cannot be opened: {failure_of(failure)}", "check --db (and that it answers)"
        )


async def diagnose(settings: Settings) -> Diagnosis:
    """The models ``serve`` with these settings would serve, and its capabilities as a start would find them."""
    async with AsyncExitStack() as stack:
        registry = BackendRegistry(await configured_backends(settings))
        stack.push_async_callback(registry.aclose)
        limiter = configured_limiter(settings, LimitTable(settings.api_keys))
        stack.push_async_callback(limiter.aclose)
        found = await probe_capabilities(settings, registry, limiter, search_provider(settings))
        return Diagnosis(registry.models(), [await _store(settings.db_url), *found])
