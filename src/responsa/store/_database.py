"""Where the SQL store's queries run: one small interface, two ways to run them.

Every query of the store is plain synchronous SQLAlchemy Core against a ``Connection``; a
:class:`Database` decides where that code runs.

- SQLite runs it inline, on the event loop's thread. A query on a local file takes tens of
  microseconds; handing it to a thread (as aiosqlite does, several times per transaction) costs
  more than the query, and on a busy single core a thread waits for the GIL. Inline work is also
  atomic with respect to every other coroutine, so one process never races itself for the write
  lock. Write transactions begin IMMEDIATE, so processes sharing the file queue on the lock
  instead of failing to upgrade a read. The WAL is checkpointed by a background thread rather
  than by whichever commit crosses the threshold, so no request waits for the disk's fsync.
- PostgreSQL runs it through asyncpg: ``run_sync`` drives the same synchronous code, each
  statement awaiting the network.
"""

from __future__ import annotations

import logging
import sqlite3
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any, Protocol, TypeVar

from sqlalchemy import Connection, Engine, create_engine, event
from sqlalchemy.ext.asyncio import AsyncEngine, create_async_engine
from sqlalchemy.pool import Pool, StaticPool

__all__ = ["Database", "open_database"]

logger = logging.getLogger(__name__)

T = TypeVar("T")

CHECKPOINT_EVERY = 1.0
"""Seconds between WAL checkpoints of the SQLite file (off the event loop)."""


class Database(Protocol):
    """Runs the store's synchronous query functions: reads in a plain transaction, writes atomically."""

    dialect: str

    async def read(self, work: Callable[[Connection], T]) -> T: ...

    async def write(self, work: Callable[[Connection], T]) -> T:
        """``work`` in one transaction: committed if it returns, rolled back if it raises."""

    async def aclose(self) -> None: ...


def open_database(url: str) -> Database:
    """The database for a ``sqlite://`` or ``postgresql://`` URL (driver prefixes are accepted too)."""
    if url.startswith("sqlite"):
        return SqliteDatabase(url)
    return AsyncDriverDatabase(url)


class SqliteDatabase:
    dialect = "sqlite"

    def __init__(self, url: str) -> None:
        url = "sqlite://" + url.split("://", 1)[1]
        path = url.split("///", 1)[-1].split("?", 1)[0]
        self._stop = threading.Event()
        self._checkpointer: threading.Thread | None = None
        if path in ("", ":memory:"):  # one connection, or each would see its own empty database
            self._engines = [_sqlite_engine(url, begin="BEGIN", poolclass=StaticPool)]
            self._reading = self._writing = self._engines[0].connect()
            return
        Path(path).expanduser().parent.mkdir(parents=True, exist_ok=True)
        self._engines = [_sqlite_engine(url, begin="BEGIN"), _sqlite_engine(url, begin="BEGIN IMMEDIATE")]
        # Held for the store's lifetime: a pool checkout per query would cost as much as the query.
        self._reading, self._writing = (engine.connect() for engine in self._engines)
        self._checkpointer = threading.Thread(target=self._checkpoint_forever, args=(path,), daemon=True)
        self._checkpointer.start()

    async def read(self, work: Callable[[Connection], T]) -> T:
        with self._reading.begin():
            return work(self._reading)

    async def write(self, work: Callable[[Connection], T]) -> T:
        with self._writing.begin():
            return work(self._writing)

    def _checkpoint_forever(self, path: str) -> None:
        connection = sqlite3.connect(Path(path).expanduser(), isolation_level=None, check_same_thread=False)
        try:
            while not self._stop.wait(CHECKPOINT_EVERY):
                try:
                    connection.execute("PRAGMA wal_checkpoint(PASSIVE)")
                except sqlite3.Error:
                    logger.exception("checkpointing the SQLite WAL failed")
        finally:
            connection.close()

    async def aclose(self) -> None:
        self._stop.set()
        if self._checkpointer is not None:
            self._checkpointer.join()
        self._reading.close()
        self._writing.close()
        for engine in self._engines:
            engine.dispose()


class AsyncDriverDatabase:
    def __init__(self, url: str) -> None:
        if url.startswith("postgresql://"):
            url = "postgresql+asyncpg://" + url[len("postgresql://") :]
        self._engine: AsyncEngine = create_async_engine(url)
        self.dialect = self._engine.dialect.name

    async def read(self, work: Callable[[Connection], T]) -> T:
        async with self._engine.connect() as conn:
            return await conn.run_sync(work)

    async def write(self, work: Callable[[Connection], T]) -> T:
        async with self._engine.begin() as conn:
            return await conn.run_sync(work)

    async def aclose(self) -> None:
        await self._engine.dispose()


def _sqlite_engine(url: str, begin: str, poolclass: type[Pool] | None = None) -> Engine:
    """An engine whose transactions start with ``begin`` (pysqlite's own transaction handling is off,
    as SQLAlchemy's documentation recommends for SQLite)."""
    options: dict[str, Any] = {"poolclass": poolclass} if poolclass else {}
    engine = create_engine(url, connect_args={"check_same_thread": False}, **options)

    @event.listens_for(engine, "connect")
    def configure(dbapi_connection: Any, _record: Any) -> None:
        dbapi_connection.isolation_level = None
        cursor = dbapi_connection.cursor()
        cursor.execute("PRAGMA journal_mode=WAL")
        cursor.execute("PRAGMA synchronous=NORMAL")
        cursor.execute("PRAGMA busy_timeout=10000")
        cursor.execute("PRAGMA wal_autocheckpoint=0")
        cursor.close()

    @event.listens_for(engine, "begin")
    def start(conn: Connection) -> None:
        conn.exec_driver_sql(begin)

    return engine
