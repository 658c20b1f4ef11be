"""Where the SQL store's queries run: one small interface, two ways to run them.

The store's queries are synchronous functions of an :class:`Sql` (``execute(statement, params)``
with SQLAlchemy Core statements); a :class:`Database` decides how they run.

- SQLite runs them inline, on the event loop's thread, on two connections held open (one reads,
  one writes). A query on a local file takes microseconds; handing it to a thread (as aiosqlite
  does, several times per transaction) costs more, and on a busy single core a thread waits for
  the GIL. Inline work is also atomic with respect to every other coroutine, so a process never
  races itself for the write lock. Statements are compiled by SQLAlchemy once and run on the
  sqlite3 cursor: SQLAlchemy's per-execution work cost several times the query itself. Write
  transactions begin IMMEDIATE, so processes sharing the file queue on the lock instead of
  failing to upgrade a read. The WAL is checkpointed by a background thread rather than by
  whichever commit crosses the threshold, so no request waits for the disk's fsync.
- PostgreSQL runs them through asyncpg: ``run_sync`` drives the same synchronous code, each
  statement awaiting the network.
"""

from __future__ import annotations

import logging
import os
import sqlite3
import threading
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any, ClassVar, Protocol, TypeVar, cast

import anyio
import anyio.lowlevel
from sqlalchemy import Connection, create_engine, event
from sqlalchemy.dialects import sqlite as sqlite_dialect
from sqlalchemy.exc import DBAPIError
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine, create_async_engine
from sqlalchemy.sql import ClauseElement, Executable
from sqlalchemy.sql.compiler import SQLCompiler

from responsa import tracing
from responsa.protocol import StorageUnavailable

__all__ = ["Database", "Rows", "Sql", "open_database"]

logger = logging.getLogger(__name__)

T = TypeVar("T")

CHECKPOINT_EVERY = 1.0
"""Seconds between WAL checkpoints of the SQLite file (off the event loop)."""

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


class SqliteDatabase:
    def __init__(self, url: str) -> None:
        path = url.split("://", 1)[1].removeprefix("/").split("?", 1)[0]
        self._stop = threading.Event()
        self._checkpointer: threading.Thread | None = None
        self.private = path in ("", ":memory:")
        self._file: Path | None = None
        if self.private:  # shared, or each connection would see its own empty database
            self._target = f"file:responsa-{id(self)}?mode=memory&cache=shared"
        else:
            self._file = Path(path).expanduser()
            self._file.parent.mkdir(parents=True, exist_ok=True)
            self._target = str(self._file)
            self._checkpointer = threading.Thread(target=self._checkpoint_forever, daemon=True)
        self._reading, self._writing = _SqliteSql(_connect(self._target)), _SqliteSql(_connect(self._target))
        self._identity = self._file_identity()
        self._batch: _Batch | None = None
        if self._checkpointer is not None:
            self._checkpointer.start()

    async def read(self, work: Callable[[Sql], T]) -> T:
        return self._reading.transaction("BEGIN", work)

    async def write(self, work: Callable[[Sql], T]) -> T:
        """Group commit: writes asked for in the same turn of the event loop share one transaction
        (each in its own savepoint, so one failing leaves the others be). The first writer waits
        one turn for others to join, then runs them all; the write is never half done by a cancel."""
        job = _Job(work)
        batch = self._batch
        with anyio.CancelScope(shield=True):
            if batch is None:
                batch = self._batch = _Batch()
                batch.jobs.append(job)
                await anyio.lowlevel.checkpoint()
                self._batch = None
                batch.run(self._writing, self._file_fault())
            else:
                batch.jobs.append(job)
                await batch.done.wait()
        return cast(T, job.outcome())

    def space_left(self) -> int | None:
        if self._file is None:
            return None
        try:
            found = os.statvfs(self._file.parent)
        except OSError:
            return None
        return found.f_bavail * found.f_frsize

    def _file_identity(self) -> tuple[int, int] | None:
        if self._file is None:
            return None
        try:
            found = os.stat(self._file)
        except FileNotFoundError:
            return None
        return found.st_dev, found.st_ino

    def _file_fault(self) -> Exception | None:
        """A write to a database file that was deleted (or replaced) would go to a file no one opens
        again: it is refused until the file is back (a full disk or a read-only file system, SQLite
        reports itself). One stat per batch of writes."""
        if self._file is None or self._file_identity() == self._identity:
            return None
        return StorageUnavailable(f"the database file {self._file} is gone or was replaced")

    async def migrate(self, upgrade: Migration) -> None:
        engine = create_engine("sqlite://", creator=lambda: _connect(self._target))  # Alembic wants SQLAlchemy

        @event.listens_for(engine, "begin")
        def begin(conn: Connection) -> None:
            conn.exec_driver_sql("BEGIN IMMEDIATE")

        with engine.connect() as conn, conn.begin():
            upgrade(conn)
        engine.dispose()

    def _checkpoint_forever(self) -> None:
        connection = _connect(self._target)
        failure: str | None = None
        try:
            while not self._stop.wait(CHECKPOINT_EVERY):
                try:
                    connection.execute("PRAGMA wal_checkpoint(PASSIVE)")
                    failure = None
                except sqlite3.Error as error:
                    if str(error) != failure:  # once per fault, not once a second while it lasts
                        logger.warning("checkpointing the SQLite WAL failed: %s", error)
                    failure = str(error)
        finally:
            connection.close()

    async def aclose(self) -> None:
        self._stop.set()
        if self._checkpointer is not None:
            self._checkpointer.join()
        self._reading.connection.close()
        self._writing.connection.close()


class _Job:
    def __init__(self, work: Callable[[Sql], Any]) -> None:
        self.work = work
        self.result: Any = None
        self.error: BaseException | None = None

    def outcome(self) -> Any:
        if self.error is not None:
            raise self.error
        return self.result


class _Batch:
    """Writes committed together: one alone in its own transaction, several in one with a savepoint each."""

    def __init__(self) -> None:
        self.jobs: list[_Job] = []
        self.done = anyio.Event()

    def run(self, sql: _SqliteSql, fault: Exception | None = None) -> None:
        """Run the jobs on ``sql``, or fail them all with ``fault``."""
        try:
            if fault is not None:
                raise fault
            if len(self.jobs) == 1:
                job = self.jobs[0]
                try:
                    job.result = sql.transaction("BEGIN IMMEDIATE", job.work)
                except Exception as error:
                    job.error = error
            else:
                sql.transaction("BEGIN IMMEDIATE", self._each_in_a_savepoint)
        except BaseException as failure:  # nothing was committed: every job failed with it
            for job in self.jobs:
                job.error = job.error or failure
        finally:
            self.done.set()

    def _each_in_a_savepoint(self, sql: Sql) -> None:
        connection = cast(_SqliteSql, sql).connection
        for job in self.jobs:
            connection.execute("SAVEPOINT job")
            try:
                job.result = job.work(sql)
            except Exception as error:
                job.error = error
                connection.execute("ROLLBACK TO job")
            connection.execute("RELEASE job")


class _SqliteSql:
    """Core statements compiled once for SQLite, run on a sqlite3 connection."""

    _dialect = sqlite_dialect.dialect(paramstyle="named")
    _compiled: ClassVar[dict[tuple[int, tuple[str, ...]], tuple[Executable, SQLCompiler, dict[str, Any]]]] = {}
    _CACHE_SIZE = 512

    def __init__(self, connection: sqlite3.Connection) -> None:
        self.connection = connection

    def transaction(self, begin: str, work: Callable[[Sql], T]) -> T:
        self.connection.execute(begin)
        try:
            result = work(self)
        except BaseException:
            self.connection.execute("ROLLBACK")
            raise
        self.connection.execute("COMMIT")
        return result

    def execute(self, statement: Executable, parameters: Params = None, /) -> Rows:
        rows = [parameters] if isinstance(parameters, Mapping) else list(parameters or [{}])
        sql, defaults = self._compile(statement, rows[0])
        values = [{**defaults, **row} for row in rows] if defaults else rows
        if len(values) == 1:
            return _SqliteRows(self.connection.execute(sql, values[0]))
        return _SqliteRows(self.connection.executemany(sql, values))

    def _compile(self, statement: Executable, first: Mapping[str, Any]) -> tuple[str, dict[str, Any]]:
        """SQL text and default parameters, compiled once per statement (and, for inserts, per set
        of columns): the store's statements are module constants. ``IN`` lists expand per call."""
        key = (id(statement), tuple(first))
        cached = self._compiled.get(key)
        if cached is None or cached[0] is not statement:
            compiled = cast(ClauseElement, statement).compile(dialect=self._dialect, column_keys=list(first))
            assert isinstance(compiled, SQLCompiler)
            if len(self._compiled) >= self._CACHE_SIZE:
                self._compiled.clear()
            # The statement is kept with its compiled form, so its id cannot be reused meanwhile.
            cached = self._compiled[key] = (statement, compiled, compiled.params)
        _, compiled, defaults = cached
        if compiled.post_compile_params:
            expanded = compiled.construct_expanded_state({**defaults, **first})
            return expanded.statement, dict(expanded.parameters)
        return compiled.string, defaults


class _SqliteRows:
    def __init__(self, cursor: sqlite3.Cursor) -> None:
        self._cursor = cursor
        self.rowcount = cursor.rowcount

    def __iter__(self) -> Iterator[Any]:
        return iter(self._cursor)

    def first(self) -> Any:
        return self._cursor.fetchone()

    def all(self) -> Sequence[Any]:
        return self._cursor.fetchall()

    def scalar(self) -> Any:
        row = self._cursor.fetchone()
        return None if row is None else row[0]

    def scalar_one(self) -> Any:
        row = self._cursor.fetchone()
        if row is None:
            raise LookupError("the statement returned no row")
        return row[0]

    def scalars(self) -> list[Any]:
        return [row[0] for row in self._cursor]


def _connect(target: str) -> sqlite3.Connection:
    """Autocommit mode (transactions are begun explicitly), WAL, checkpoints left to the checkpointer."""
    connection = sqlite3.connect(target, isolation_level=None, check_same_thread=False, uri=target.startswith("file:"))
    for pragma in ("journal_mode=WAL", "synchronous=NORMAL", "busy_timeout=10000", "wal_autocheckpoint=0"):
        connection.execute(f"PRAGMA {pragma}")
    return connection


class AsyncDriverDatabase:
    private = False

    def __init__(self, url: str) -> None:
        if url.startswith("postgresql://"):
            url = "postgresql+asyncpg://" + url[len("postgresql://") :]
        self._engine: AsyncEngine = create_async_engine(url)

    async def read(self, work: Callable[[Sql], T]) -> T:
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
        async with self._engine.begin() as conn:
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
