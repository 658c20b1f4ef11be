"""Cursor pagination: over an ordered item table (response input items, conversation items), and over
rows ordered by an id that grows with time (responses, files, vector stores and their files)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from pydantic import TypeAdapter
from sqlalchemy import ColumnElement, Select, Table, select

from responsa.protocol import Item, dump_json

from .._base import ItemPage, Order
from ._database import Sql

__all__ = ["dump_item", "item_page", "keyed_page", "load_item"]

_ITEM: TypeAdapter[Item] = TypeAdapter(Item)


def dump_item(item: Item) -> str:
    return dump_json(item).decode()


def load_item(body: str) -> Item:
    return _ITEM.validate_json(body)


def item_page(
    conn: Sql,
    table: Table,
    scope: Sequence[ColumnElement[bool]],
    *,
    limit: int,
    order: Order,
    after: str | None,
    before: str | None,
) -> ItemPage:
    """Items of ``table`` within ``scope`` by ``position``; ``after``/``before`` are item ids in that listing."""
    position, item_id = table.c.position, table.c.item_id
    query = select(table.c.body).where(*scope)
    for cursor, later in ((after, True), (before, False)):
        if cursor is None:
            continue
        at = select(position).where(*scope, item_id == cursor).limit(1).scalar_subquery()
        query = query.where(position > at if later == (order == "asc") else position < at)
    ordering = position.asc() if order == "asc" else position.desc()
    rows = (conn.execute(query.order_by(ordering).limit(limit + 1))).all()
    return ItemPage([load_item(body) for (body,) in rows[:limit]], has_more=len(rows) > limit)


def keyed_page(
    query: Select[Any], key: ColumnElement[Any], *, limit: int, order: Order, after: str | None, before: str | None
) -> Select[Any]:
    """``query`` ordered by ``key`` and cut to the page between the cursors (keys of that listing),
    with one row more than ``limit`` to tell whether more follow."""
    for cursor, later in ((after, True), (before, False)):
        if cursor is not None:
            query = query.where(key > cursor if later == (order == "asc") else key < cursor)
    return query.order_by(key.asc() if order == "asc" else key.desc()).limit(limit + 1)
