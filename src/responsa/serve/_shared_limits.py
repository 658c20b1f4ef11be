"""Rate limits shared by the workers of one machine without Redis: each scope's token buckets (a
tenant's, or a project's for one model) live in a small file every worker maps, and each decision is
taken under an exclusive ``flock`` of it.

The file is a table of ``SLOTS`` slots, each a scope's digest and its buckets; a scope takes the first
free slot from where its digest points, so limits made at runtime (the Admin API's) find a place in
every worker without one telling the others. The buckets' arithmetic is :class:`RateLimiter`'s own: a
decision loads the scope's buckets from the file, decides as one process would, and stores them back
before the lock is let go, so N workers admit exactly what one process would. ``time.monotonic`` is the
machine's clock, the same in every process. A lock dies with its holder (a killed worker never leaves
it held), and a decision holds it for microseconds, so it is taken inline rather than from a thread.
"""

from __future__ import annotations

import fcntl
import hashlib
import logging
import mmap
import os
import struct
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from responsa.engine.projects import LimitTable
from responsa.http import KINDS, Bucket, RateLimiter
from responsa.protocol import Capability

__all__ = ["SLOTS", "SharedRateLimiter"]

logger = logging.getLogger(__name__)

SLOTS = 4096
"""How many scopes the file holds; past it, a scope's buckets are this process's alone (logged)."""
_DIGEST = 16
_BUCKET = struct.Struct("dd")
"""A bucket in the file: its level and when it was last updated (0: never, so still full)."""
_SLOT = _DIGEST + len(KINDS) * _BUCKET.size


class SharedRateLimiter:
    """Buckets in a file the workers share (``WorkerGroup.limits_file``)."""

    def __init__(self, table: LimitTable, path: Path) -> None:
        self._buckets = RateLimiter(table)
        self._fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
        if os.fstat(self._fd).st_size < SLOTS * _SLOT:
            os.ftruncate(self._fd, SLOTS * _SLOT)  # zeros: every slot free, every bucket full
        self._map = mmap.mmap(self._fd, SLOTS * _SLOT)
        self._offsets: dict[tuple[str, str | None], int] = {}
        self._full_said = False

    async def admit(self, tenant: str, model: str | None = None) -> None:
        """Let a request through, or 429 while one of the scope's buckets is empty."""
        with self._held(tenant, model):
            self._buckets.admit_now(tenant, model)

    async def spend(self, tenant: str, tokens: int, model: str | None = None) -> None:
        with self._held(tenant, model):
            self._buckets.spend_now(tenant, tokens, model)

    @contextmanager
    def _held(self, tenant: str, model: str | None) -> Iterator[None]:
        """The scope's buckets as the file has them, for one decision, written back after it."""
        buckets = self._buckets.scope(tenant, model)
        if buckets is None:  # a scope without limits
            yield
            return
        offset = None
        fcntl.flock(self._fd, fcntl.LOCK_EX)
        try:
            offset = self._slot(tenant, model)
            if offset is not None:
                for index, bucket in buckets:
                    _load(bucket, self._map, offset + index * _BUCKET.size)
            yield
        finally:
            if offset is not None:
                for index, bucket in buckets:
                    _BUCKET.pack_into(self._map, offset + index * _BUCKET.size, bucket.level, bucket.updated)
            fcntl.flock(self._fd, fcntl.LOCK_UN)

    def _slot(self, tenant: str, model: str | None) -> int | None:
        """Where the scope's buckets start in the file (taking a free slot; under the lock), None when
        the file is full."""
        found = self._offsets.get((tenant, model))
        if found is not None:
            return found
        digest = hashlib.blake2b(f"{tenant}\0{model or ''}".encode(), digest_size=_DIGEST).digest()
        start = int.from_bytes(digest[:8], "little") % SLOTS
        for probe in range(SLOTS):
            offset = (start + probe) % SLOTS * _SLOT
            held = self._map[offset : offset + _DIGEST]
            if held == digest or held == bytes(_DIGEST):
                if held != digest:
                    self._map[offset : offset + _DIGEST] = digest
                self._offsets[tenant, model] = offset + _DIGEST
                return offset + _DIGEST
        if not self._full_said:
            logger.warning("The workers' rate limit file holds %d scopes: more are limited per worker", SLOTS)
            self._full_said = True
        return None

    async def capability(self) -> Capability | None:
        return None

    async def aclose(self) -> None:
        self._map.close()
        os.close(self._fd)


def _load(bucket: Bucket, shared: mmap.mmap, offset: int) -> None:
    level, updated = _BUCKET.unpack_from(shared, offset)
    if updated:
        bucket.level, bucket.updated = level, updated
