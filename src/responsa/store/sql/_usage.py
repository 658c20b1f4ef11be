"""Usage queries of the SQL store: each added row is added to its bucket's counts by one
``INSERT … ON CONFLICT DO UPDATE`` (SQLite reads PostgreSQL's as PostgreSQL does), so any number of
processes add to the same buckets without reading them first."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from sqlalchemy import delete, func, literal, select
from sqlalchemy.dialects import postgresql

from .._usage_repository import USAGE_TOTALS, UsageFilter, UsageRow
from ._database import Database
from ._usage_tables import LATENCY_BUCKETS, usage_buckets

__all__ = ["SqlUsage"]

_u = usage_buckets.c
_KEY = ("width", "start", "project_id", "api_key_id", "model", "kind", "batch")
_COUNTS = (*USAGE_TOTALS, *(f"latency_{index}" for index in range(LATENCY_BUCKETS)))
_insert = postgresql.insert(usage_buckets)
_ADD = _insert.on_conflict_do_update(
    index_elements=list(_KEY), set_={name: _u[name] + _insert.excluded[name] for name in _COUNTS}
)
_EMPTY = {"project_id": "", "api_key_id": "", "model": "", "batch": False, "kind": ""}
"""What a dimension reads as where a query sums over it (one for each of ``USAGE_DIMENSIONS``)."""


def _values(row: UsageRow) -> dict[str, Any]:
    latency = row.latency + [0] * (LATENCY_BUCKETS - len(row.latency))
    return {**{name: getattr(row, name) for name in (*_KEY, *USAGE_TOTALS)},
            **{f"latency_{index}": count for index, count in enumerate(latency)}}  # fmt: skip


class SqlUsage:
    def __init__(self, db: Database) -> None:
        self._db = db

    async def add_usage(self, rows: Sequence[UsageRow]) -> None:
        if rows:
            values = [_values(row) for row in rows]
            await self._db.write(lambda conn: conn.execute(_ADD, values))

    async def usage(self, wanted: UsageFilter, group_by: Sequence[str]) -> list[UsageRow]:
        grouped = [_u[name] for name in group_by]
        shown = [_u[name] if name in group_by else literal(_EMPTY[name]).label(name) for name in _EMPTY]
        query = select(_u.start, *shown, *(func.sum(_u[name]).label(name) for name in _COUNTS)).where(
            _u.width == wanted.width, _u.kind.in_(list(wanted.kinds)), _u.start >= wanted.start, _u.start < wanted.end
        )
        for name, values in (("project_id", wanted.project_ids), ("api_key_id", wanted.api_key_ids),
                             ("model", wanted.models)):  # fmt: skip
            if values:
                query = query.where(_u[name].in_(list(values)))
        if wanted.batch is not None:
            query = query.where(_u.batch == wanted.batch)
        query = query.group_by(_u.start, *grouped).order_by(_u.start, *grouped)
        rows = await self._db.read(lambda conn: conn.execute(query).all())
        names = ("start", *_EMPTY, *_COUNTS)  # the columns' order
        return [_row(wanted, dict(zip(names, row, strict=True))) for row in rows]

    async def prune_usage(self, width: str, before: int) -> int:
        statement = delete(usage_buckets).where(_u.width == width, _u.start < before)
        return int(await self._db.write(lambda conn: conn.execute(statement).rowcount))


def _row(wanted: UsageFilter, found: Any) -> UsageRow:
    return UsageRow(wanted.width, int(found["start"]), found["project_id"], found["api_key_id"], found["model"],
                    found["kind"] or ",".join(wanted.kinds), bool(found["batch"]),
                    **{name: int(found[name] or 0) for name in USAGE_TOTALS},
                    latency=[int(found[f"latency_{index}"] or 0) for index in range(LATENCY_BUCKETS)])  # fmt: skip
