"""Storage faults: a full disk, a read-only or vanished database, a database server that is down.

Such a fault is not a bug of the request: the database says why it cannot write (or be reached),
and the same request succeeds once the fault clears. :class:`GuardedDatabase` turns it into
:class:`StorageUnavailable` (503, ``retry-after``), so a client gets an OpenAI-shaped error it may
retry instead of a bare 500 or a reset connection, and remembers it, so ``/health`` tells the truth:
failing since the last write that failed, until a write (a client's or the health check's own probe)
succeeds again.
"""

from __future__ import annotations

import logging
import sqlite3
import time
import uuid
from collections.abc import Callable
from typing import TypeVar

from sqlalchemy import delete, insert, literal, select
from sqlalchemy.exc import DBAPIError
from sqlalchemy.exc import TimeoutError as PoolTimeout

from responsa.protocol import StorageUnavailable

from .._base import StoreHealth
from ._database import Database, Migration, Sql
from ._tables import store_probe

__all__ = ["GuardedDatabase", "storage_fault"]

logger = logging.getLogger(__name__)

T = TypeVar("T")

_SQLITE_FAULTS = {
    sqlite3.SQLITE_FULL: "the disk is full",
    sqlite3.SQLITE_READONLY: "the database is read-only",
    sqlite3.SQLITE_IOERR: "the disk failed to read or write",
    sqlite3.SQLITE_CANTOPEN: "the database file cannot be opened",
    sqlite3.SQLITE_BUSY: "the database stayed locked by another process",
    sqlite3.SQLITE_NOTADB: "the database file is not a database",
    sqlite3.SQLITE_CORRUPT: "the database file is corrupt",
}
"""SQLite's primary result codes for a database that cannot take writes now (see sqlite.org/rescode.html)."""

_POSTGRES_CLASSES = {
    "08": "the database connection failed",
    "53": "the database server is out of resources (disk, memory or connections)",
    "57": "the database server is shutting down or refusing work",
    "58": "the database server had a system error",
}
"""SQLSTATE classes of a PostgreSQL server that cannot serve now, whatever the request."""

_POSTGRES_STATES = {
    "25006": "the database is read-only",
    "3D000": "the database does not exist",
}


def storage_fault(error: BaseException) -> str | None:
    """Why the store cannot serve now, if ``error`` is a storage fault (else ``None``: a bug or a conflict)."""
    if isinstance(error, sqlite3.Error):
        code = getattr(error, "sqlite_errorcode", None)
        return None if code is None else _SQLITE_FAULTS.get(code & 0xFF)
    if isinstance(error, PoolTimeout):
        return "no database connection became free in time"
    if isinstance(error, DBAPIError):
        if isinstance(error.orig, sqlite3.Error):
            return storage_fault(error.orig)
        state = getattr(error.orig, "sqlstate", None) or getattr(error.orig, "pgcode", None)
        if isinstance(state, str):
            return _POSTGRES_STATES.get(state) or _POSTGRES_CLASSES.get(state[:2])
        if error.connection_invalidated or _caused_by_the_network(error):
            return "the database connection was lost"
        return None
    if isinstance(error, OSError):  # the driver could not reach the server at all (ConnectionError is one)
        return f"the database is unreachable ({error.strerror or type(error).__name__})"
    return None


def _caused_by_the_network(error: BaseException) -> bool:
    seen: BaseException | None = error
    while seen is not None:
        if isinstance(seen, OSError) or "connection is closed" in str(seen):
            return True
        seen = seen.__cause__ or seen.__context__
    return False


MIN_FREE_BYTES = 1 << 20
"""Below this much free disk, a database file's store reports itself failing."""

_PROBE_PAD = "x" * 8192
"""Large enough that the probe allocates pages, as a real write would (a full disk refuses it)."""


class GuardedDatabase:
    """A :class:`Database` whose storage faults become :class:`StorageUnavailable` and set its health."""

    def __init__(self, database: Database) -> None:
        self._database = database
        self.private = database.private
        self.health = StoreHealth()

    async def read(self, work: Callable[[Sql], T]) -> T:
        try:
            return await self._database.read(work)
        except Exception as error:
            self._raise_fault(error)
            raise

    async def write(self, work: Callable[[Sql], T]) -> T:
        try:
            result = await self._database.write(work)
        except Exception as error:
            self._raise_fault(error)
            raise
        if self.health.failing is not None:
            logger.warning("the store takes writes again (it could not since %s: %s)", self.health.since,
                           self.health.failing)  # fmt: skip
            self.health = StoreHealth()
        return result

    async def check(self) -> StoreHealth:
        """The store's health now: a read, and while it is failing a probe write, so that it turns
        healthy again when the fault clears even if no client writes meanwhile. A database file whose
        disk is (nearly) full is failing too, though a small write may still fit in space it holds."""
        try:
            await self.read(lambda conn: conn.execute(select(literal(1))).scalar())
            if self.health.failing is not None:
                await self.write(_probe)
        except StorageUnavailable:
            pass
        space = self._database.space_left()
        if self.health.failing is None and space is not None and space < MIN_FREE_BYTES:
            return StoreHealth(f"the disk is full ({space} bytes left)", time.time())
        return self.health

    def space_left(self) -> int | None:
        return self._database.space_left()

    def _raise_fault(self, error: Exception) -> None:
        """A storage fault is recorded and raised as :class:`StorageUnavailable`; anything else returns."""
        reason = error.reason if isinstance(error, StorageUnavailable) else storage_fault(error)
        if reason is None:
            return
        if self.health.failing is None:
            logger.error("the store cannot serve: %s", reason)
        self.health = StoreHealth(reason, self.health.since or time.time())  # the latest reason, the first time
        if not isinstance(error, StorageUnavailable):
            raise StorageUnavailable(reason) from error

    async def migrate(self, upgrade: Migration) -> None:
        await self._database.migrate(upgrade)

    async def aclose(self) -> None:
        await self._database.aclose()


def _probe(conn: Sql) -> None:
    probe_id = uuid.uuid4().hex
    conn.execute(insert(store_probe), {"id": probe_id, "written_at": time.time(), "pad": _PROBE_PAD})
    conn.execute(delete(store_probe).where(store_probe.c.id == probe_id))
