"""SQLite as the store's :class:`Database`: queries run inline, on the event loop's thread, on two
connections held open (one reads, one writes).

A query on a local file takes microseconds; handing it to a thread (as aiosqlite does, several times
per transaction) costs more, and on a busy single core a thread waits for the GIL. Inline work is
also atomic with respect to every other coroutine, so a process never races itself for the write
lock. Statements are compiled by SQLAlchemy once and run on the sqlite3 cursor: SQLAlchemy's
per-execution work cost several times the query itself. Write transactions begin IMMEDIATE, so
processes sharing the file queue on the lock instead of failing to upgrade a read. The WAL is
checkpointed by a background thread rather than by whichever commit crosses the threshold, so no
request waits for the disk's fsync. Where processes share the file (``--workers``), a batch finding
the write lock held by another tries again a millisecond later, still gathering writes, instead of
sleeping in SQLite's busy handler with the event loop stopped.
"""

from __future__ import annotations

import asyncio
import logging
import os
import sqlite3
import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, TypeVar, cast

import anyio
from sqlalchemy import Connection, create_engine, event
from sqlalchemy.dialects import sqlite as sqlite_dialect
from sqlalchemy.sql import ClauseElement, Executable
from sqlalchemy.sql.compiler import SQLCompiler

from responsa.protocol import StorageUnavailable

if TYPE_CHECKING:  # the protocols it implements; _database imports this module to open it
    from ._database import Migration, Params, Rows, Sql

__all__ = ["SqliteDatabase"]

logger = logging.getLogger(__name__)

T = TypeVar("T")

BUSY_TIMEOUT_MS = 10_000
"""How long a statement waits for another process's lock on the file."""

MIGRATION_WAIT_MS = 600_000
"""How long a migration waits for another process's (another migration's) lock on the file."""

CHECKPOINT_EVERY = 1.0
"""Seconds between WAL checkpoints of the SQLite file (off the event loop)."""

LOCK_RETRY_SECS = 0.001
"""How soon a batch tries again for the write lock another process holds."""

TRUNCATE_AFTER_FRAMES = 16_384
"""WAL pages (64 MB of 4 KiB pages) after which the writer empties the WAL file (see ``_truncate_wal``)."""


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
        self._writing.connection.execute("PRAGMA busy_timeout=0")  # the writer waits for the lock itself
        self._identity = self._file_identity()
        self._batch: _Batch | None = None
        self._truncate_due = False
        """Set by the checkpointer when the WAL has grown past its limit; the writer acts on it."""
        if self._checkpointer is not None:
            self._checkpointer.start()

    async def read(self, work: Callable[[Sql], T]) -> T:
        return self._reading.transaction("BEGIN", work)

    async def write(self, work: Callable[[Sql], T]) -> T:
        """Group commit: writes asked for while a batch gathers share one transaction (each in its
        own savepoint, so one failing leaves the others be). The batch is gathered and run by
        callbacks of the event loop (see ``_gather``), not by a writer: a writer's cancel cannot stop
        it, so a write is never half done by a cancel, and a cancelled writer hears of the cancel once
        its write is over, as if the write were shielded."""
        job = _Job(work)
        batch = self._batch
        if batch is None:
            batch = self._batch = _Batch()
            asyncio.get_running_loop().call_soon(self._gather, batch, 1, 1)
        batch.jobs.append(job)
        try:
            await job.done
        except asyncio.CancelledError:
            await _outlast(batch)
            raise
        return cast(T, job.outcome())

    def _gather(self, batch: _Batch, joined: int, turns: int) -> None:
        """One turn of the event loop has gone by since ``joined`` writes were in ``batch``: wait one
        more while each turn brings writers (up to ``GATHER_TURNS``), then commit them. A lone write
        waits one turn; under load a commit, which writes the same index pages whether it holds one
        response or ten, is shared by more of them."""
        if len(batch.jobs) > joined and turns < GATHER_TURNS:
            asyncio.get_running_loop().call_soon(self._gather, batch, len(batch.jobs), turns + 1)
            return
        if not self._begin(batch):
            return
        self._batch = None
        batch.run(self._writing, self._file_fault)

    def _begin(self, batch: _Batch) -> bool:
        """Empty the WAL when it is due (between two batches), then take the file's write lock for
        ``batch`` without waiting. While another process holds it, the batch goes on gathering and
        tries again ``LOCK_RETRY_SECS`` later, for ``BUSY_TIMEOUT_MS`` at most (then it fails). True
        when the batch is to run now: begun, or failed."""
        if self._truncate_due:
            self._truncate_wal()
        try:
            self._writing.connection.execute("BEGIN IMMEDIATE")
        except sqlite3.OperationalError as error:
            now = time.monotonic()
            batch.locked_out_since = batch.locked_out_since or now
            if (
                error.sqlite_errorcode & 0xFF != sqlite3.SQLITE_BUSY
                or now - batch.locked_out_since > BUSY_TIMEOUT_MS / 1000
            ):
                batch.failure = error
                return True
            asyncio.get_running_loop().call_later(LOCK_RETRY_SECS, self._gather, batch, len(batch.jobs), GATHER_TURNS)
            return False
        except sqlite3.Error as error:
            batch.failure = error
        return True

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
        """In one IMMEDIATE transaction: it holds the file's write lock, so processes that start together
        migrate one at a time, and the others, waiting as long as a migration may take, find the schema
        at its head (Alembic reads the version inside the transaction) and change nothing."""

        def connect() -> sqlite3.Connection:
            connection = _connect(self._target)
            connection.execute(f"PRAGMA busy_timeout={MIGRATION_WAIT_MS}")
            return connection

        engine = create_engine("sqlite://", creator=connect)  # Alembic wants SQLAlchemy

        @event.listens_for(engine, "begin")
        def begin(conn: Connection) -> None:
            conn.exec_driver_sql("BEGIN IMMEDIATE")

        with engine.connect() as conn, conn.begin():
            upgrade(conn)
        engine.dispose()

    def _truncate_wal(self) -> None:
        """Copy what the last passive checkpoint left (the pages written while it ran) and empty the
        WAL, on the writer's own connection between two batches: no write of this process can be
        in the way, so it cannot starve, and it never waits (a busy timeout of 0: another process
        reading or checkpointing just puts it off to the next batch)."""
        try:
            busy, _frames, _copied = self._writing.connection.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()
            self._truncate_due = bool(busy)
        except sqlite3.Error:  # a fault the batch itself will meet and report
            pass

    def _checkpoint_forever(self) -> None:
        """A passive checkpoint every second copies the WAL into the database without stopping anyone.
        Under steady writes it never catches up with the last commit, so SQLite never starts the WAL
        over and it grows without end (2 GB in 2 minutes on the rig, and its index, mapped in memory,
        with it): past ``TRUNCATE_AFTER_FRAMES`` pages the writer is asked to empty it."""
        connection = _connect(self._target)
        failure: str | None = None
        try:
            while not self._stop.wait(CHECKPOINT_EVERY):
                try:
                    _busy, frames, _copied = connection.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchone()
                    if frames >= TRUNCATE_AFTER_FRAMES:
                        self._truncate_due = True
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


GATHER_TURNS = 4
"""Event-loop turns a batch of writes may wait for more writers, while each turn brings some."""


async def _outlast(batch: _Batch) -> None:
    """Wait until ``batch`` is over (a few turns of the event loop, or as long as another process
    holds the write lock), whatever cancels come. Shielded, so a cancelled scope does not deliver its
    cancel again every turn of the loop while the wait lasts; a plain task cancel comes once."""
    with anyio.CancelScope(shield=True):
        while not batch.ended.done():
            try:
                await asyncio.shield(batch.ended)
            except asyncio.CancelledError:
                pass


class _Job:
    def __init__(self, work: Callable[[Sql], Any]) -> None:
        self.work = work
        self.result: Any = None
        self.error: BaseException | None = None
        self.done: asyncio.Future[None] = asyncio.get_running_loop().create_future()

    def outcome(self) -> Any:
        if self.error is not None:
            raise self.error
        return self.result


class _Batch:
    """Writes committed together: one alone in its own transaction, several in one with a savepoint each."""

    def __init__(self) -> None:
        self.jobs: list[_Job] = []
        self.ended: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        """Done once every job has its outcome: what a cancelled writer waits on."""
        self.locked_out_since = 0.0
        """When the batch first found the write lock held by another process (0: it has not)."""
        self.failure: Exception | None = None
        """Why its transaction could not begin (it fails every job)."""

    def run(self, sql: _SqliteSql, fault: Callable[[], Exception | None]) -> None:
        """Run the jobs in the transaction begun on ``sql``, or fail them all with the fault that
        stopped it beginning or the one ``fault`` returns (or raises)."""
        try:
            if self.failure is not None:
                raise self.failure
            found = fault()
            if found is not None:
                raise found
            if len(self.jobs) == 1:
                job = self.jobs[0]
                try:
                    job.result = sql.complete(job.work)
                except Exception as error:
                    job.error = error
            else:
                sql.complete(self._each_in_a_savepoint)
        except BaseException as failure:  # nothing was committed: every job failed with it
            if sql.connection.in_transaction:
                sql.connection.execute("ROLLBACK")
            for job in self.jobs:
                job.error = job.error or failure
        finally:
            self.ended.set_result(None)
            for job in self.jobs:
                if not job.done.done():  # a cancelled writer's is cancelled already
                    job.done.set_result(None)

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
        return self.complete(work)

    def complete(self, work: Callable[[Sql], T]) -> T:
        """Do ``work`` in the transaction begun and commit it, or roll it back if it raises."""
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
    """Autocommit mode (transactions are begun explicitly), WAL, checkpoints left to the checkpointer.
    The busy timeout comes first, and a pragma SQLite answers ``busy`` without waiting (it does so
    where waiting could deadlock: a new file turned to WAL while another process opening it at the
    same moment migrates it) is tried again, for as long as the busy timeout."""
    connection = sqlite3.connect(target, isolation_level=None, check_same_thread=False, uri=target.startswith("file:"))
    deadline = time.monotonic() + BUSY_TIMEOUT_MS / 1000
    for pragma in (f"busy_timeout={BUSY_TIMEOUT_MS}", "journal_mode=WAL", "synchronous=NORMAL", "wal_autocheckpoint=0"):
        while True:
            try:
                connection.execute(f"PRAGMA {pragma}")
                break
            except sqlite3.OperationalError as error:
                if error.sqlite_errorcode & 0xFF != sqlite3.SQLITE_BUSY or time.monotonic() > deadline:
                    raise
                time.sleep(LOCK_RETRY_SECS)
    return connection
