"""Listing stored responses: newest (or oldest) first, cursor paging by id, and filters.

Ids begin with their creation time in microseconds, so ordering by id is ordering by creation, on
the primary key's index. The model and metadata live in the response's JSON body: they are read
with the database's own JSON functions (SQLite ``json_extract``, PostgreSQL ``#>>`` on a cast).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from sqlalchemy import JSON, ColumnElement, Select, cast, func, select

from .._base import Order, ResponseFilter
from ._database import Sql
from ._paging import keyed_page
from ._tables import response_items, responses

__all__ = ["list_rows"]


def list_rows(
    conn: Sql,
    sqlite: bool,
    live: Mapping[str, Any],
    wanted: ResponseFilter,
    *,
    limit: int,
    order: Order,
    after: str | None,
    before: str | None,
) -> tuple[list[tuple[str, str, list[str]]], bool]:
    """(id, body, output item bodies) of one page of responses, and whether more follow."""
    r = responses.c
    query: Select[Any] = select(r.id, r.body).where(r.tenant == live["tenant"], r.stored_at >= live["oldest"])
    query = _filtered(query, sqlite, wanted)
    rows = conn.execute(keyed_page(query, r.id, limit=limit, order=order, after=after, before=before)).all()
    page = rows[:limit]
    outputs: dict[str, list[str]] = {response_id: [] for response_id, _body in page}
    if outputs:
        i = response_items.c
        items = select(i.response_id, i.body).where(i.response_id.in_(list(outputs)), i.role == "output")
        for response_id, body in conn.execute(items.order_by(i.response_id, i.position)):
            outputs[response_id].append(body)
    return [(response_id, body, outputs[response_id]) for response_id, body in page], len(rows) > limit


def _filtered(query: Select[Any], sqlite: bool, wanted: ResponseFilter) -> Select[Any]:
    r = responses.c
    if wanted.status is not None:
        query = query.where(r.status == wanted.status)
    if wanted.previous_response_id is not None:
        query = query.where(r.previous_response_id == wanted.previous_response_id)
    if wanted.created_after is not None:
        query = query.where(r.created_at >= wanted.created_after)
    if wanted.created_before is not None:
        query = query.where(r.created_at < wanted.created_before)
    if wanted.model is not None:
        query = query.where(_body_field(sqlite, "model") == wanted.model)
    if wanted.conversation is not None:
        query = query.where(_body_field(sqlite, "conversation", "id") == wanted.conversation)
    for key, value in wanted.metadata.items():
        query = query.where(_body_field(sqlite, "metadata", key) == value)
    return query


def _body_field(sqlite: bool, *path: str) -> ColumnElement[Any]:
    """A string field of the JSON body (the column is text: SQLite reads it as JSON, PostgreSQL casts it)."""
    if sqlite:  # a plain path string: the SQLite executor binds values as they are
        return func.json_extract(responses.c.body, "$" + "".join(f".{json.dumps(key)}" for key in path))
    field: ColumnElement[Any] = cast(responses.c.body, JSON)[path].as_string()
    return field
