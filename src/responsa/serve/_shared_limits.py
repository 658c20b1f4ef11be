"""Rate limits shared by the workers of one machine without Redis: each tenant's token buckets live in
a small file every worker maps, and each decision is taken under an exclusive ``flock`` of it.

The buckets' arithmetic is :class:`RateLimiter`'s own: a decision loads the tenant's buckets from the
file, decides as one process would, and stores them back before the lock is let go, so N workers
admit exactly what one process would. ``time.monotonic`` is the machine's clock, the same in every
process. A lock dies with its holder (a killed worker never leaves it held), and a decision holds it
for microseconds, so it is taken inline rather than from a thread.
"""

from __future__ import annotations

import fcntl
import mmap
import os
import struct
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from responsa.config import ApiKey
from responsa.http import Bucket, RateLimiter
from responsa.protocol import Capability

__all__ = ["SharedRateLimiter"]

_SLOT = struct.Struct("dd")
"""A bucket in the file: its level and when it was last updated (0: never, so still full)."""


class SharedRateLimiter:
    """Buckets in a file the workers share (``WorkerGroup.limits_file``)."""

    def __init__(self, keys: tuple[ApiKey, ...], path: Path) -> None:
        self._buckets = RateLimiter(keys)
        tenants = sorted({*self._buckets.requests, *self._buckets.tokens})
        self._slots = {tenant: index * 2 * _SLOT.size for index, tenant in enumerate(tenants)}
        self._fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
        size = max(len(tenants) * 2 * _SLOT.size, _SLOT.size)
        if os.fstat(self._fd).st_size < size:
            os.ftruncate(self._fd, size)  # zeros: every bucket still full
        self._map = mmap.mmap(self._fd, size)

    async def admit(self, tenant: str) -> None:
        """Let a request through, or 429 while the tenant's token or request bucket is empty."""
        with self._held(tenant):
            self._buckets.admit_now(tenant)

    async def spend(self, tenant: str, tokens: int) -> None:
        with self._held(tenant):
            self._buckets.spend_now(tenant, tokens)

    @contextmanager
    def _held(self, tenant: str) -> Iterator[None]:
        """The tenant's buckets as the file has them, for one decision, written back after it."""
        offset = self._slots.get(tenant)
        if offset is None:  # a tenant without limits
            yield
            return
        buckets = (self._buckets.requests.get(tenant), self._buckets.tokens.get(tenant))
        fcntl.flock(self._fd, fcntl.LOCK_EX)
        try:
            for index, bucket in enumerate(buckets):
                if bucket is not None:
                    _load(bucket, self._map, offset + index * _SLOT.size)
            yield
        finally:
            for index, bucket in enumerate(buckets):
                if bucket is not None:
                    _SLOT.pack_into(self._map, offset + index * _SLOT.size, bucket.level, bucket.updated)
            fcntl.flock(self._fd, fcntl.LOCK_UN)

    async def capability(self) -> Capability | None:
        return None

    async def aclose(self) -> None:
        self._map.close()
        os.close(self._fd)


def _load(bucket: Bucket, shared: mmap.mmap, offset: int) -> None:
    level, updated = _SLOT.unpack_from(shared, offset)
    if updated:
        bucket.level, bucket.updated = level, updated
