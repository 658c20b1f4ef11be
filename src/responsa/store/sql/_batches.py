"""Batch queries of the SQL store: a batch's row, its lines, and the claims processes share them by.

A line is run by the process holding it (``holder``, until ``lease_until``); its result is written
only while that holder still holds it, so a line whose process stopped is run again by another, and
its result appears once. A finished batch's output and error files are written in the transaction
that finishes it, with its webhook events (``_webhooks.announce``).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from typing import Any

import orjson
from sqlalchemy import Select, and_, delete, func, insert, or_, select, update
from sqlalchemy.sql.dml import Update

from responsa.protocol import Batch, BatchCounts

from .._batch_repository import BatchFile, ClaimedBatch, ClaimedLine, InputLine
from ._database import Database, Sql
from ._files import write_whole_file
from ._paging import keyed_page
from ._statements import NOW
from ._tables import batch_lines, batches
from ._webhooks import announce

__all__ = ["SqlBatches"]

_b, _l = batches.c, batch_lines.c


def _unclaimed(now: Any) -> Any:
    """No process holds the batch at ``now`` (a time, or ``NOW``)."""
    return _b.lease_until.is_(None) | (_b.lease_until < now)


def _validating(now: Any) -> Any:
    """A batch waiting for its file to be read, that no process holds at ``now``."""
    return (_b.status == "validating") & _unclaimed(now)


def _finishing(now: Any) -> Any:
    """A batch whose lines are all done (or expired, or cancelled with none running) at ``now``, or that was
    being finalized, that no process holds."""
    pending = select(_l.line).where(_l.batch_id == _b.id, _l.state == "pending").exists()
    running = select(_l.line).where(_l.batch_id == _b.id, _l.state == "running").exists()
    live = select(_l.line).where(_l.batch_id == _b.id, _l.state == "running", _l.lease_until >= now).exists()
    done = (
        ((_b.status == "in_progress") & (((~pending) & (~running)) | ((_b.expires_at <= now) & ~live)))
        | ((_b.status == "cancelling") & ~live)
        | (_b.status == "finalizing")
    )
    return _unclaimed(now) & done


def _candidates(where: Any) -> Select[Any]:
    """The first batches ``where`` finds, for a claim to try."""
    return select(_b.id, _b.tenant, _b.body, _b.status).where(where).limit(16)


_VALIDATION_CANDIDATES = _candidates(_validating(NOW))
_FINISHING_CANDIDATES = _candidates(_finishing(NOW))
_RUNNING_BATCHES = (
    select(_b.id, _b.tenant, _b.body, _b.expires_at)
    .where(_b.status == "in_progress", _b.expires_at > NOW)
    .order_by(_b.id)
)

LINES_PER_WRITE = 500

_RAN = ("completed", "failed")
_RUNNING = frozenset({"in_progress", "finalizing", "cancelling"})


def _load(body: str) -> Batch:
    return Batch.model_validate_json(body)


def _dump(batch: Batch) -> str:
    return batch.model_dump_json(exclude={"request_counts"})


def _endpoint(body: str) -> str:
    """A batch's endpoint, read from its body without validating the whole object."""
    endpoint: str = orjson.loads(body)["endpoint"]
    return endpoint


def _counts(conn: Sql, batch_id: str) -> BatchCounts:
    rows = conn.execute(select(_l.state, func.count()).where(_l.batch_id == batch_id).group_by(_l.state)).all()
    by_state = {state: count for state, count in rows}
    return BatchCounts(
        completed=by_state.get("completed", 0),
        failed=by_state.get("failed", 0),
        total=sum(by_state.values()),
    )


def _counted(conn: Sql, batch: Batch, status: str) -> Batch:
    """``batch`` with its counts: live while lines run; a finished batch's body holds its final ones
    (its lines are gone)."""
    if status in _RUNNING:
        batch.request_counts = _counts(conn, batch.id)
    return batch


def _held_line(holder: str, batch_id: str, line: int) -> Update:
    """An update of the line, if ``holder`` still runs it (else another process took it: no row)."""
    mine = (_l.batch_id == batch_id) & (_l.line == line) & (_l.holder == holder) & (_l.state == "running")
    return update(batch_lines).where(mine)


class SqlBatches:
    def __init__(self, db: Database, tenant: str) -> None:
        self._db = db
        self.tenant = tenant

    def scoped(self, tenant: str) -> SqlBatches:
        return SqlBatches(self._db, tenant)

    async def create_batch(self, batch: Batch) -> None:
        row = {
            "id": batch.id,
            "tenant": self.tenant,
            "status": batch.status,
            "body": _dump(batch),
            "expires_at": batch.expires_at or 0,
            "lease_until": None,
        }
        await self._db.write(lambda conn: conn.execute(insert(batches), [row]))

    def _with_counts(self, conn: Sql, body: str, status: str) -> Batch:
        return _counted(conn, _load(body), status)

    async def get_batch(self, batch_id: str) -> Batch | None:
        def work(conn: Sql) -> Batch | None:
            row = conn.execute(select(_b.body, _b.status).where(_b.id == batch_id, _b.tenant == self.tenant)).first()
            return None if row is None else self._with_counts(conn, row[0], row[1])

        return await self._db.read(work)

    async def list_batches(self, *, limit: int, after: str | None) -> tuple[list[Batch], bool]:
        query = keyed_page(
            select(_b.body, _b.status).where(_b.tenant == self.tenant),
            _b.id,
            limit=limit,
            order="desc",
            after=after,
            before=None,
        )

        def work(conn: Sql) -> tuple[list[Batch], bool]:
            rows = conn.execute(query).all()
            return [self._with_counts(conn, body, status) for body, status in rows[:limit]], len(rows) > limit

        return await self._db.read(work)

    async def request_cancel(self, batch_id: str, at: int) -> Batch | None:
        def work(conn: Sql) -> Batch | None:
            row = conn.execute(select(_b.body, _b.status).where(_b.id == batch_id, _b.tenant == self.tenant)).first()
            if row is None:
                return None
            batch = _load(row[0])
            if batch.status in ("validating", "in_progress"):  # a finalizing batch has run every line: it ends
                batch.cancelling_at = at
                if batch.status == "validating":  # nothing ran: cancelled at once
                    batch.status, batch.cancelled_at = "cancelled", at
                    announce(conn, self.tenant, "batch.cancelled", batch.id, at)
                else:
                    batch.status = "cancelling"
                update_row = update(batches).where(_b.id == batch_id, _b.status == row[1])
                conn.execute(update_row.values(status=batch.status, body=_dump(batch)))
            return _counted(conn, batch, batch.status)

        return await self._db.write(work)

    async def claim_validation(self, now: float, until: float) -> list[ClaimedBatch]:
        return await self._claim(_VALIDATION_CANDIDATES, _validating, now, until, None)

    async def _claim(
        self, candidates: Select[Any], where: Callable[[Any], Any], now: float, until: float, status: str | None
    ) -> list[ClaimedBatch]:
        """Batches that ``candidates`` finds (at ``now``), held until ``until`` (and ``status`` where they
        were ``in_progress``) if ``where(now)`` still holds. Looked for with a read first: a process with
        nothing to claim never takes the write lock."""
        rows = await self._db.read(lambda conn: conn.execute(candidates, {"now": now}).all())
        if not rows:
            return []

        def work(conn: Sql) -> list[ClaimedBatch]:
            claimed = []
            for batch_id, tenant, body, old_status in rows:
                batch = _load(body)
                values: dict[str, Any] = {"lease_until": until}
                if status is not None and old_status == "in_progress":
                    batch.status, batch.finalizing_at = status, int(time.time())
                    values.update(status=status, body=_dump(batch))
                taken = update(batches).where(_b.id == batch_id, _b.status == old_status, where(now)).values(**values)
                if conn.execute(taken).rowcount:
                    claimed.append(ClaimedBatch(tenant, batch))
            return claimed

        return await self._db.write(work)

    async def start_batch(self, batch: Batch, lines: Sequence[InputLine]) -> bool:
        """The lines are written in transactions of :data:`LINES_PER_WRITE` (a big file does not hold the
        write lock, nor, on SQLite, the event loop, in one go); none is claimed before the last
        transaction makes the batch ``in_progress``. A validator that stopped half-way left lines that
        the next one replaces."""
        rows = [
            {
                "batch_id": batch.id,
                "line": line.line,
                "custom_id": line.custom_id,
                "request": line.request,
                "state": "pending",
                "holder": None,
                "lease_until": None,
                "result": None,
            }
            for line in lines
        ]
        await self._db.write(lambda conn: conn.execute(delete(batch_lines).where(_l.batch_id == batch.id)))
        for start in range(0, len(rows), LINES_PER_WRITE):
            chunk = rows[start : start + LINES_PER_WRITE]
            await self._db.write(lambda conn, chunk=chunk: conn.execute(insert(batch_lines), chunk))  # type: ignore[misc]

        started = update(batches).where(_b.id == batch.id, _b.status == "validating")
        started = started.values(status=batch.status, body=_dump(batch), lease_until=None)  # as it is now
        return bool(await self._db.write(lambda conn: conn.execute(started).rowcount))

    async def fail_batch(self, batch: Batch) -> None:
        """``failed`` (validation), with its webhook event, unless it was cancelled meanwhile."""

        failed = update(batches).where(_b.id == batch.id, _b.status == "validating")
        failed = failed.values(status="failed", body=_dump(batch), lease_until=None)  # as it is now
        batch_id, at = batch.id, batch.failed_at or int(time.time())

        def work(conn: Sql) -> None:
            if conn.execute(failed).rowcount:
                announce(conn, self.tenant, "batch.failed", batch_id, at)

        await self._db.write(work)

    async def claim_lines(self, holder: str, now: float, until: float, limit: int) -> list[ClaimedLine]:
        """Each running batch's first pending lines (and lines whose holder's lease ran out), found
        through the (batch, state, line) index: a claim costs the same at the end of a long batch as at
        its start."""
        lapsed = (_l.state == "running") & (_l.lease_until < now)

        def candidates(conn: Sql) -> list[tuple[Any, ...]]:
            found: list[tuple[Any, ...]] = []
            for batch_id, tenant, body, expires_at in conn.execute(_RUNNING_BATCHES, {"now": now}).all():
                for state in (_l.state == "pending", lapsed):
                    wanted = limit - len(found)
                    if wanted <= 0:
                        return found
                    lines = select(_l.line, _l.custom_id, _l.request, _l.response_id)
                    lines = lines.where(_l.batch_id == batch_id, state)
                    found += [(batch_id, tenant, body, expires_at, *row)
                              for row in conn.execute(lines.order_by(_l.line).limit(wanted)).all()]  # fmt: skip
            return found

        rows = await self._db.read(candidates)  # a read first, as in _claim
        if not rows:
            return []
        free = (_l.state == "pending") | lapsed

        def work(conn: Sql) -> list[ClaimedLine]:
            claimed = []
            for batch_id, tenant, body, expires_at, line, custom_id, request, response_id in rows:
                key = (_l.batch_id == batch_id) & (_l.line == line) & free
                taken = update(batch_lines).where(key).values(state="running", holder=holder, lease_until=until)
                if conn.execute(taken).rowcount:
                    endpoint = _endpoint(body)
                    claimed.append(ClaimedLine(tenant, batch_id, endpoint, line, custom_id, request, expires_at,
                                               response_id))  # fmt: skip
            return claimed

        return await self._db.write(work)

    async def renew_lines(self, holder: str, keys: Sequence[tuple[str, int]], until: float) -> None:
        if not keys:
            return
        held = or_(*(and_(_l.batch_id == batch_id, _l.line == line) for batch_id, line in keys))
        renew = update(batch_lines).where(held, _l.holder == holder, _l.state == "running").values(lease_until=until)
        await self._db.write(lambda conn: conn.execute(renew))

    async def note_response(self, holder: str, batch_id: str, line: int, response_id: str) -> bool:
        noted = _held_line(holder, batch_id, line).values(response_id=response_id)
        return bool(await self._db.write(lambda conn: conn.execute(noted).rowcount))

    async def finish_line(self, holder: str, batch_id: str, line: int, state: str, result: str) -> bool:
        finished = _held_line(holder, batch_id, line).values(state=state, result=result, lease_until=None)
        return bool(await self._db.write(lambda conn: conn.execute(finished).rowcount))

    async def release_line(self, holder: str, batch_id: str, line: int) -> None:
        released = _held_line(holder, batch_id, line).values(state="pending", holder=None, lease_until=None)
        await self._db.write(lambda conn: conn.execute(released))

    async def claim_finishing(self, now: float, until: float) -> list[ClaimedBatch]:
        return await self._claim(_FINISHING_CANDIDATES, _finishing, now, until, "finalizing")

    async def unfinished_results(self, batch_id: str) -> list[tuple[int, str]]:
        query = select(_l.line, _l.custom_id).where(_l.batch_id == batch_id, _l.state.not_in(_RAN)).order_by(_l.line)
        return [(line, custom_id) for line, custom_id in await self._db.read(lambda conn: conn.execute(query).all())]

    async def results(self, batch_id: str) -> list[tuple[str, str]]:
        query = select(_l.state, _l.result).where(_l.batch_id == batch_id, _l.state.in_(_RAN)).order_by(_l.line)
        return [(state, result) for state, result in await self._db.read(lambda conn: conn.execute(query).all())]

    async def finish_batch(self, batch: Batch, made: Sequence[BatchFile]) -> bool:
        assert batch.status in ("completed", "expired", "cancelled")
        at = batch.completed_at or batch.expired_at or batch.cancelled_at or int(time.time())

        ended = batch.model_copy(deep=True)  # the write's own: its counts are read in its transaction
        files = list(made)

        def work(conn: Sql) -> None:
            ended.request_counts = _counts(conn, ended.id)
            body = ended.model_dump_json()  # with its final counts: its lines live on in its files only
            ending = update(batches).where(_b.id == ended.id, _b.status.in_(("finalizing", "cancelling")))
            if not conn.execute(ending.values(status=ended.status, body=body, lease_until=None)).rowcount:
                raise _Finished  # another process finished it (this one's claim had lapsed): roll back
            for each in files:
                write_whole_file(conn, self.tenant, each.file, each.data)
            conn.execute(delete(batch_lines).where(_l.batch_id == ended.id))
            announce(conn, self.tenant, f"batch.{ended.status}", ended.id, at)

        try:
            await self._db.write(work)
        except _Finished:
            return False
        batch.request_counts = ended.request_counts
        return True


class _Finished(Exception):
    """The batch had already ended when this process came to finish it."""
