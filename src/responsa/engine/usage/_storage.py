"""What the vector stores hold, sampled into the usage ledger (``/organization/usage/vector_stores``):
each look records every tenant's bytes times the seconds since this process's last look (``units``)
and those seconds (``SAMPLES_KIND``, no tenant), in the same flush. A bucket's usage is then a mean
over time: the sum of byte-seconds over the sum of seconds, however long the bucket, however often a
process looks (a report looks before it reads, so what was just stored shows at once), however many
processes look at the same store (each sees the same bytes), a tenant with nothing stored counting 0."""

from __future__ import annotations

import time

from responsa.store import VectorStoreRepository

from ._ledger import UsageLedger, Used

__all__ = ["SAMPLES_KIND", "STORAGE_KIND", "StorageSampler", "mean_bytes"]

STORAGE_KIND = "vector_stores"
SAMPLES_KIND = "vector_stores.samples"


class StorageSampler:
    def __init__(self, vector_stores: VectorStoreRepository, ledger: UsageLedger) -> None:
        self._vector_stores = vector_stores
        self._ledger = ledger
        self._last: float | None = None

    async def sample(self) -> None:
        """One look at every tenant's vector stores (``engine._periodic.every`` runs it)."""
        held = await self._vector_stores.bytes_by_tenant()
        now = time.monotonic()
        seconds = 1 if self._last is None else max(1, round(now - self._last))
        self._last = now
        for tenant, used in held.items():
            self._ledger.record(tenant, Used(STORAGE_KIND, "", units=used * seconds))
        self._ledger.record("", Used(SAMPLES_KIND, "", units=seconds))


def mean_bytes(seconds: int, byte_seconds: int) -> int:
    """A bucket's storage: its mean over the seconds looked at (0 without any)."""
    return byte_seconds // seconds if seconds else 0
