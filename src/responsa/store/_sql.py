"""The SQL store (SQLAlchemy 2 async): SQLite by default, the same code for PostgreSQL later."""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from contextlib import AsyncExitStack, asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import orjson
from alembic import command
from alembic.config import Config
from pydantic import TypeAdapter
from sqlalchemy import Connection, delete, event, insert, select, text
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine, create_async_engine

from responsa.protocol import Item, ResponseObject

from ._base import ItemPage, Order
from ._tables import response_items, responses

__all__ = ["SqlStore", "async_url"]

_ITEM = TypeAdapter(Item)
_MIGRATIONS = Path(__file__).parent / "migrations"
_CONTEXT_QUERY = text(
    """
    WITH RECURSIVE chain(id, prev, depth) AS (
        SELECT id, previous_response_id, 0 FROM responses WHERE id = :id
        UNION ALL
        SELECT r.id, r.previous_response_id, chain.depth + 1
        FROM responses r JOIN chain ON r.id = chain.prev
    )
    SELECT i.body FROM chain JOIN response_items i ON i.response_id = chain.id
    ORDER BY chain.depth DESC, i.role ASC, i.position ASC
    """
)


def async_url(url: str) -> str:
    """Pick the async driver for a plain ``sqlite://`` or ``postgresql://`` URL."""
    for plain, driver in (("sqlite://", "sqlite+aiosqlite://"), ("postgresql://", "postgresql+asyncpg://")):
        if url.startswith(plain):
            return driver + url[len(plain) :]
    return url


def _dump_item(item: Item) -> str:
    return orjson.dumps(item.model_dump(mode="json")).decode()


def _load_item(body: str) -> Item:
    return _ITEM.validate_json(body)


class SqlStore:
    """Responses as rows; items in their own table so chains and listings never parse whole bodies."""

    def __init__(self, url: str) -> None:
        self.url = async_url(url)
        self._engine: AsyncEngine = create_async_engine(self.url)
        # SQLite has one writer at a time: queue writers here instead of spinning on SQLITE_BUSY.
        self._write_lock: anyio.Lock | None = None
        if self._engine.dialect.name == "sqlite":
            _ensure_parent_dir(self.url)
            event.listen(self._engine.sync_engine, "connect", _sqlite_pragmas)
            self._write_lock = anyio.Lock()

    @asynccontextmanager
    async def _writing(self) -> AsyncIterator[AsyncConnection]:
        async with AsyncExitStack() as stack:
            if self._write_lock is not None:
                await stack.enter_async_context(self._write_lock)
            yield await stack.enter_async_context(self._engine.begin())

    async def migrate(self) -> None:
        async with self._writing() as conn:
            await conn.run_sync(_upgrade_to_head)

    async def save_response(self, response: ResponseObject, input_items: Sequence[Item] | None = None) -> None:
        body = orjson.dumps(response.model_dump(mode="json", exclude={"output", "output_text"})).decode()
        row = {
            "id": response.id,
            "created_at": response.created_at,
            "status": response.status,
            "previous_response_id": response.previous_response_id,
            "body": body,
        }
        async with self._writing() as conn:
            updated = await conn.execute(
                responses.update().where(responses.c.id == response.id).values(status=row["status"], body=body)
            )
            if updated.rowcount == 0:
                await conn.execute(insert(responses), [row])
            await conn.execute(
                delete(response_items).where(
                    response_items.c.response_id == response.id, response_items.c.role == "output"
                )
            )
            rows = _item_rows(response.id, "output", response.output)
            if input_items:
                rows += _item_rows(response.id, "input", input_items)
            if rows:
                await conn.execute(insert(response_items), rows)

    async def get_response(self, response_id: str) -> ResponseObject | None:
        async with self._engine.connect() as conn:
            body = (await conn.execute(select(responses.c.body).where(responses.c.id == response_id))).scalar()
            if body is None:
                return None
            outputs = await conn.execute(
                select(response_items.c.body)
                .where(response_items.c.response_id == response_id, response_items.c.role == "output")
                .order_by(response_items.c.position)
            )
            data: dict[str, Any] = orjson.loads(body)
            data["output"] = [orjson.loads(item) for (item,) in outputs]
        return ResponseObject.model_validate(data)

    async def delete_response(self, response_id: str) -> bool:
        async with self._writing() as conn:
            deleted = await conn.execute(delete(responses).where(responses.c.id == response_id))
            await conn.execute(delete(response_items).where(response_items.c.response_id == response_id))
        return bool(deleted.rowcount)

    async def list_input_items(
        self, response_id: str, *, limit: int, order: Order, after: str | None, before: str | None
    ) -> ItemPage | None:
        items = response_items.c
        async with self._engine.connect() as conn:
            exists = await conn.execute(select(responses.c.id).where(responses.c.id == response_id))
            if exists.first() is None:
                return None
            query = select(items.body).where(items.response_id == response_id, items.role == "input")
            for cursor, later in ((after, True), (before, False)):
                if cursor is None:
                    continue
                position = (
                    select(items.position)
                    .where(items.response_id == response_id, items.role == "input", items.item_id == cursor)
                    .scalar_subquery()
                )
                ascending_side = later == (order == "asc")
                query = query.where(items.position > position if ascending_side else items.position < position)
            ordering = items.position.asc() if order == "asc" else items.position.desc()
            rows = (await conn.execute(query.order_by(ordering).limit(limit + 1))).all()
        return ItemPage([_load_item(body) for (body,) in rows[:limit]], has_more=len(rows) > limit)

    async def load_context(self, response_id: str) -> list[Item] | None:
        async with self._engine.connect() as conn:
            exists = await conn.execute(select(responses.c.id).where(responses.c.id == response_id))
            if exists.first() is None:
                return None
            rows = await conn.execute(_CONTEXT_QUERY, {"id": response_id})
            return [_load_item(body) for (body,) in rows]

    async def get_item(self, item_id: str) -> Item | None:
        async with self._engine.connect() as conn:
            body = (
                await conn.execute(select(response_items.c.body).where(response_items.c.item_id == item_id).limit(1))
            ).scalar()
        return None if body is None else _load_item(body)

    async def aclose(self) -> None:
        await self._engine.dispose()


def _item_rows(response_id: str, role: str, items: Sequence[Item]) -> list[dict[str, Any]]:
    return [
        {"response_id": response_id, "role": role, "position": i, "item_id": item.id, "body": _dump_item(item)}
        for i, item in enumerate(items)
    ]


def _upgrade_to_head(connection: Connection) -> None:
    config = Config()
    config.set_main_option("script_location", str(_MIGRATIONS))
    config.attributes["connection"] = connection
    command.upgrade(config, "head")


def _ensure_parent_dir(url: str) -> None:
    path = url.split("///", 1)[-1].split("?", 1)[0]
    if path and path != ":memory:":
        Path(path).expanduser().parent.mkdir(parents=True, exist_ok=True)


def _sqlite_pragmas(dbapi_connection: Any, _record: Any) -> None:
    cursor = dbapi_connection.cursor()
    cursor.execute("PRAGMA journal_mode=WAL")
    cursor.execute("PRAGMA synchronous=NORMAL")
    cursor.execute("PRAGMA busy_timeout=10000")
    cursor.close()
