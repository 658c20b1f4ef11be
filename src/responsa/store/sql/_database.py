"""Where the SQL store's queries run: one small interface, two ways to run them.

The store's queries are synchronous functions of an :class:`Sql` (``execute(statement, params)``
with SQLAlchemy Core statements); a :class:`Database` decides how they run.

- SQLite runs them inline, on the event loop's thread (see ``_sqlite_database``).
- PostgreSQL runs them through asyncpg: ``run_sync`` drives the same synchronous code, each
  statement awaiting the network.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any, Protocol, TypeVar

from sqlalchemy import Connection, text
from sqlalchemy.exc import DBAPIError
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine, create_async_engine
from sqlalchemy.sql import Executable

from responsa import tracing
from responsa.protocol import StorageUnavailable

from ._sqlite_database import SqliteDatabase

__all__ = ["Database", "Rows", "Sql", "open_database"]

T = TypeVar("T")

MIGRATION_LOCK = int.from_bytes(b"responsa", "big")
"""The key of PostgreSQL's advisory lock that a migration holds: one process migrates at a time."""

Params = Mapping[str, Any] | Sequence[Mapping[str, Any]] | None
"""One set of named parameters, or a list of them (one row each, for inserts)."""


class Rows(Protocol):
    """The result of a statement (a subset of SQLAlchemy's ``CursorResult``)."""

    @property
    def rowcount(self) -> int: ...

    def __iter__(self) -> Iterator[Any]: ...

    def first(self) -> Any: ...

    def all(self) -> Sequence[Any]: ...

    def scalar(self) -> Any: ...

    def scalar_one(self) -> Any: ...

    def scalars(self) -> Any: ...


class Sql(Protocol):
    """What the store's queries run against, inside a transaction."""

    def execute(self, statement: Executable, parameters: Params = None, /) -> Rows: ...


Migration = Callable[[Connection], None]


class Database(Protocol):
    """Runs the store's synchronous query functions: reads in a plain transaction, writes atomically."""

    private: bool
    """Whether only this process can open the database (in-memory SQLite)."""

    async def read(self, work: Callable[[Sql], T]) -> T: ...

    async def write(self, work: Callable[[Sql], T]) -> T:
        """``work`` in one transaction: committed if it returns, rolled back if it raises."""

    async def migrate(self, upgrade: Migration) -> None:
        """Run ``upgrade`` (Alembic's) on a SQLAlchemy connection in one transaction."""

    def space_left(self) -> int | None:
        """Bytes free for the database to grow into, where this process can tell (its own file)."""

    async def aclose(self) -> None: ...


def open_database(url: str) -> Database:
    """The database for a ``sqlite://`` or ``postgresql://`` URL (driver prefixes are accepted too);
    with tracing on, every write is a span."""
    database: Database = SqliteDatabase(url) if url.startswith("sqlite") else AsyncDriverDatabase(url)
    if tracing.enabled():
        return _TracedDatabase(database, "sqlite" if url.startswith("sqlite") else "postgresql")
    return database


class _TracedDatabase:
    """A span per write, named after the store method that asked for it."""

    def __init__(self, database: Database, system: str) -> None:
        self._database = database
        self._system = system
        self.private = database.private

    async def read(self, work: Callable[[Sql], T]) -> T:
        return await self._database.read(work)

    async def write(self, work: Callable[[Sql], T]) -> T:
        operation = work.__qualname__.split(".<locals>")[0].rsplit(".", 1)[-1]
        with tracing.span(f"store {operation}", {"db.system.name": self._system, "db.operation.name": operation}):
            return await self._database.write(work)

    async def migrate(self, upgrade: Migration) -> None:
        await self._database.migrate(upgrade)

    def space_left(self) -> int | None:
        return self._database.space_left()

    async def aclose(self) -> None:
        await self._database.aclose()


POOL_SIZE = 15
"""Connections a process holds to PostgreSQL, at most, all kept open: SQLAlchemy's default (5, and
10 more opened when busy and closed when handed back) made a busy server connect and disconnect all
the time (a backend started, authenticated and set up for most requests: a quarter of the server's CPU
per response, see docs/performance.md "Workers"). The same 15 at most as before, so
``max_connections`` is no nearer: requests past them wait for one."""


class AsyncDriverDatabase:
    private = False

    def __init__(self, url: str) -> None:
        if url.startswith("postgresql://"):
            url = "postgresql+asyncpg://" + url[len("postgresql://") :]
        self._engine: AsyncEngine = create_async_engine(url, pool_size=POOL_SIZE, max_overflow=0)

    async def read(self, work: Callable[[Sql], T]) -> T:
        """``work`` on a pooled connection; on a new one, once, where the pooled one was found dropped
        (the database restarted, or an administrator ended it): SQLAlchemy then renews the whole pool,
        and a read may run again (a write may not: it may have been done)."""
        try:
            return await self._read(work)
        except DBAPIError as error:
            if not error.connection_invalidated:
                raise
        return await self._read(work)

    async def _read(self, work: Callable[[Sql], T]) -> T:
        conn = await self._connect()
        try:
            return await conn.run_sync(lambda sync: work(_AlchemySql(sync)))
        finally:
            await conn.close()

    async def write(self, work: Callable[[Sql], T]) -> T:
        conn = await self._connect()
        try:
            async with conn.begin():
                return await conn.run_sync(lambda sync: work(_AlchemySql(sync)))
        finally:
            await conn.close()

    async def _connect(self) -> AsyncConnection:
        """A pooled connection; failing to get one is never the request's fault (the server is down,
        refuses connections, or the database is gone)."""
        conn = self._engine.connect()
        try:
            await conn.start()
        except (DBAPIError, OSError) as error:
            detail = str(getattr(error, "orig", None) or error).splitlines()[0]
            raise StorageUnavailable(f"cannot connect to the database: {detail}") from error
        return conn

    async def migrate(self, upgrade: Migration) -> None:
        """One process at a time, whatever the replicas: the transaction first takes the migrations'
        advisory lock, so another that starts together waits, then finds the schema at its head and
        changes nothing (Alembic reads the version inside the same transaction)."""
        async with self._engine.begin() as conn:
            await conn.execute(text("SELECT pg_advisory_xact_lock(:key)"), {"key": MIGRATION_LOCK})
            await conn.run_sync(upgrade)

    def space_left(self) -> int | None:
        return None  # the database server's disk: it says when it is full

    async def aclose(self) -> None:
        await self._engine.dispose()


class _AlchemySql:
    """:class:`Sql` on a SQLAlchemy connection (whose results already have the methods of :class:`Rows`)."""

    def __init__(self, conn: Connection) -> None:
        self._conn = conn

    def execute(self, statement: Executable, parameters: Params = None, /) -> Rows:
        return self._conn.execute(statement, parameters)
