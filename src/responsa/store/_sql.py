"""The SQL store (SQLAlchemy 2 async): SQLite by default, the same code for PostgreSQL later."""

from __future__ import annotations

import copy
import time
from collections.abc import AsyncIterator, Sequence
from contextlib import AsyncExitStack, asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import orjson
from alembic import command
from alembic.config import Config
from sqlalchemy import ColumnElement, Connection, delete, event, insert, select, text, union_all
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine, create_async_engine

from responsa.protocol import Item, ResponseObject

from ._base import ItemPage, LoggedEvent, Order, Retention
from ._paging import dump_item, item_page, load_item
from ._sql_conversations import ConversationQueries, append_items
from ._tables import conversation_items, conversations, response_events, response_items, responses

__all__ = ["SqlStore", "async_url"]

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


class SqlStore(ConversationQueries):
    """Responses as rows; items in their own tables so chains and listings never parse whole bodies."""

    def __init__(self, url: str, retention: Retention | None = None) -> None:
        self.url = async_url(url)
        self.retention = retention or Retention()
        self.tenant = "default"
        self._engine: AsyncEngine = create_async_engine(self.url)
        # SQLite has one writer at a time: queue writers here instead of spinning on SQLITE_BUSY.
        self._write_lock: anyio.Lock | None = None
        if self._engine.dialect.name == "sqlite":
            _ensure_parent_dir(self.url)
            event.listen(self._engine.sync_engine, "connect", _sqlite_pragmas)
            self._write_lock = anyio.Lock()

    def scoped(self, tenant: str) -> SqlStore:
        view = copy.copy(self)  # shares the engine and the write lock
        view.tenant = tenant
        return view

    @asynccontextmanager
    async def _writing(self) -> AsyncIterator[AsyncConnection]:
        async with AsyncExitStack() as stack:
            if self._write_lock is not None:
                await stack.enter_async_context(self._write_lock)
            yield await stack.enter_async_context(self._engine.begin())

    def _live_response(self) -> list[ColumnElement[bool]]:
        """This tenant's responses that have not expired."""
        live = [responses.c.tenant == self.tenant]
        if self.retention.response_ttl:
            live.append(responses.c.stored_at >= time.time() - self.retention.response_ttl)
        return live

    async def migrate(self) -> None:
        async with self._writing() as conn:
            await conn.run_sync(_upgrade_to_head)

    async def save_response(
        self,
        response: ResponseObject,
        input_items: Sequence[Item] | None = None,
        append_to_conversation: Sequence[Item] = (),
    ) -> None:
        body = orjson.dumps(response.model_dump(mode="json", exclude={"output", "output_text"})).decode()
        conversation_id = response.conversation["id"] if response.conversation else None
        async with self._writing() as conn:
            if input_items is not None:  # the first save: the row is new (fewer statements on the hot path)
                row = {
                    "id": response.id,
                    "created_at": response.created_at,
                    "status": response.status,
                    "previous_response_id": response.previous_response_id,
                    "body": body,
                    "stored_at": time.time(),
                    "conversation_id": conversation_id,
                    "background": response.background,
                    "tenant": self.tenant,
                }
                await conn.execute(insert(responses), [row])
                await self._evict_responses_over_cap(conn)
                rows = _item_rows(response.id, "input", input_items)
            else:
                await conn.execute(
                    responses.update()
                    .where(responses.c.id == response.id, responses.c.tenant == self.tenant)
                    .values(status=response.status, body=body)
                )
                owned = [response_items.c.response_id == response.id, response_items.c.role == "output"]
                await conn.execute(delete(response_items).where(*owned))
                rows = []
            rows += _item_rows(response.id, "output", response.output)
            if rows:
                await conn.execute(insert(response_items), rows)
            if append_to_conversation and conversation_id is not None:
                await append_items(conn, conversation_id, append_to_conversation)

    async def get_response(self, response_id: str) -> ResponseObject | None:
        async with self._engine.connect() as conn:
            query = select(responses.c.body).where(responses.c.id == response_id, *self._live_response())
            body = (await conn.execute(query)).scalar()
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

    async def append_events(self, response_id: str, events: Sequence[LoggedEvent]) -> None:
        if not events:
            return
        rows = [
            {"response_id": response_id, "sequence_number": e.sequence_number, "type": e.type, "body": e.data}
            for e in events
        ]
        async with self._writing() as conn:
            await conn.execute(insert(response_events), rows)

    async def events_after(self, response_id: str, after: int, limit: int = 1000) -> list[LoggedEvent]:
        column = response_events.c
        owned = select(responses.c.id).where(responses.c.id == response_id, responses.c.tenant == self.tenant)
        query = (
            select(column.sequence_number, column.type, column.body)
            .where(column.response_id == response_id, column.sequence_number > after, owned.exists())
            .order_by(column.sequence_number)
            .limit(limit)
        )
        async with self._engine.connect() as conn:
            return [LoggedEvent(seq, kind, body) for seq, kind, body in await conn.execute(query)]

    async def renew_lease(self, response_id: str, until: float) -> None:
        async with self._writing() as conn:
            await conn.execute(responses.update().where(responses.c.id == response_id).values(lease_until=until))

    async def request_cancel(self, response_id: str) -> None:
        async with self._writing() as conn:
            await conn.execute(responses.update().where(responses.c.id == response_id).values(cancel_requested=True))

    async def cancels_requested(self, response_ids: Sequence[str]) -> list[str]:
        if not response_ids:
            return []
        query = select(responses.c.id).where(responses.c.id.in_(list(response_ids)), responses.c.cancel_requested)
        async with self._engine.connect() as conn:
            return [r for (r,) in await conn.execute(query)]

    async def orphaned_background(self, now: float) -> list[tuple[str, ResponseObject]]:
        column = responses.c
        query = select(column.id, column.tenant).where(
            column.background.is_(True),
            column.status.in_(("queued", "in_progress")),
            (column.lease_until.is_(None)) | (column.lease_until < now),
        )
        async with self._engine.connect() as conn:
            found = [(response_id, tenant) for response_id, tenant in await conn.execute(query)]
        orphans = []
        for response_id, tenant in found:
            response = await self.scoped(tenant).get_response(response_id)
            if response is not None:
                orphans.append((tenant, response))
        return orphans

    async def delete_response(self, response_id: str) -> bool:
        async with self._writing() as conn:
            if not await self._response_exists(conn, response_id):
                return False
            return await _delete_responses(conn, [response_id]) > 0

    async def _response_exists(self, conn: AsyncConnection, response_id: str) -> bool:
        query = select(responses.c.id).where(responses.c.id == response_id, *self._live_response())
        return (await conn.execute(query)).first() is not None

    async def list_input_items(
        self, response_id: str, *, limit: int, order: Order, after: str | None, before: str | None
    ) -> ItemPage | None:
        async with self._engine.connect() as conn:
            if not await self._response_exists(conn, response_id):
                return None
            scope = [response_items.c.response_id == response_id, response_items.c.role == "input"]
            return await item_page(conn, response_items, scope, limit=limit, order=order, after=after, before=before)

    async def load_context(self, response_id: str) -> list[Item] | None:
        async with self._engine.connect() as conn:
            if not await self._response_exists(conn, response_id):
                return None
            rows = await conn.execute(_CONTEXT_QUERY, {"id": response_id})
            return [load_item(body) for (body,) in rows]

    async def get_item(self, item_id: str) -> Item | None:
        in_responses = (
            select(response_items.c.body)
            .join(responses, responses.c.id == response_items.c.response_id)
            .where(response_items.c.item_id == item_id, responses.c.tenant == self.tenant)
        )
        in_conversations = (
            select(conversation_items.c.body)
            .join(conversations, conversations.c.id == conversation_items.c.conversation_id)
            .where(conversation_items.c.item_id == item_id, conversations.c.tenant == self.tenant)
        )
        query = union_all(in_responses, in_conversations).limit(1)
        async with self._engine.connect() as conn:
            body = (await conn.execute(query)).scalar()
        return None if body is None else load_item(body)

    async def _evict_responses_over_cap(self, conn: AsyncConnection) -> int:
        cap = self.retention.response_max_entries
        if not cap:
            return 0
        evicted = select(responses.c.id).order_by(responses.c.stored_at.desc()).offset(cap)
        return await _delete_responses(conn, [r for (r,) in await conn.execute(evicted)])

    async def sweep(self) -> int:
        removed = 0
        async with self._writing() as conn:
            if self.retention.response_ttl:
                expired = select(responses.c.id).where(
                    responses.c.stored_at < time.time() - self.retention.response_ttl
                )
                removed += await _delete_responses(conn, [r for (r,) in await conn.execute(expired)])
            removed += await self._sweep_conversations(conn)
        return removed

    async def aclose(self) -> None:
        await self._engine.dispose()


async def _delete_responses(conn: AsyncConnection, ids: list[str]) -> int:
    if not ids:
        return 0
    await conn.execute(delete(response_items).where(response_items.c.response_id.in_(ids)))
    await conn.execute(delete(response_events).where(response_events.c.response_id.in_(ids)))
    deleted = await conn.execute(delete(responses).where(responses.c.id.in_(ids)))
    return int(deleted.rowcount)


def _item_rows(response_id: str, role: str, items: Sequence[Item]) -> list[dict[str, Any]]:
    return [
        {"response_id": response_id, "role": role, "position": i, "item_id": item.id, "body": dump_item(item)}
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
