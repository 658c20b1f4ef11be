"""Conversation queries of the SQL store (mixed into :class:`~responsa.store.SqlStore`)."""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from contextlib import AbstractAsyncContextManager
from typing import Any

import orjson
from sqlalchemy import ColumnElement, delete, func, insert, select, update
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine

from responsa.protocol import Conversation, InvalidRequest, Item, check_metadata

from ._base import ItemPage, Order, Retention
from ._paging import dump_item, item_page, load_item
from ._tables import conversation_items, conversations

__all__ = ["ConversationQueries", "append_items"]


async def append_items(conn: AsyncConnection, conversation_id: str, items: Sequence[Item]) -> bool:
    """Append after the current last item, inside the caller's transaction (which holds the row lock)."""
    locked = await conn.execute(
        select(conversations.c.id).where(conversations.c.id == conversation_id).with_for_update()
    )
    if locked.first() is None:
        return False
    if not items:
        return True
    column = conversation_items.c
    start = (
        await conn.execute(
            select(func.coalesce(func.max(column.position), -1) + 1).where(column.conversation_id == conversation_id)
        )
    ).scalar_one()
    rows = [
        {"conversation_id": conversation_id, "position": start + i, "item_id": item.id, "body": dump_item(item)}
        for i, item in enumerate(items)
    ]
    await conn.execute(insert(conversation_items), rows)
    return True


def _to_conversation(row: Any) -> Conversation:
    return Conversation(id=row.id, created_at=row.created_at, metadata=orjson.loads(row.metadata))


class ConversationQueries:
    """Needs ``_engine``, ``_writing()`` and ``retention`` from the store it is mixed into."""

    _engine: AsyncEngine
    retention: Retention
    tenant: str

    def _writing(self) -> AbstractAsyncContextManager[AsyncConnection]:
        raise NotImplementedError

    def _live_conversation(self) -> list[ColumnElement[bool]]:
        """This tenant's conversations that have not expired."""
        live = [conversations.c.tenant == self.tenant]
        if self.retention.conversation_ttl:
            live.append(conversations.c.stored_at >= time.time() - self.retention.conversation_ttl)
        return live

    async def create_conversation(self, conversation: Conversation, items: Sequence[Item]) -> None:
        row = {
            "id": conversation.id,
            "created_at": conversation.created_at,
            "stored_at": time.time(),
            "metadata": orjson.dumps(conversation.metadata).decode(),
            "tenant": self.tenant,
        }
        async with self._writing() as conn:
            await conn.execute(insert(conversations), [row])
            await append_items(conn, conversation.id, items)
            cap = self.retention.conversation_max_entries
            if cap:
                evicted = select(conversations.c.id).order_by(conversations.c.stored_at.desc()).offset(cap)
                await self._delete_conversations(conn, [r for (r,) in await conn.execute(evicted)])

    async def get_conversation(self, conversation_id: str) -> Conversation | None:
        async with self._engine.connect() as conn:
            return await self._fetch_conversation(conn, conversation_id)

    async def _fetch_conversation(self, conn: AsyncConnection, conversation_id: str) -> Conversation | None:
        query = select(conversations).where(conversations.c.id == conversation_id, *self._live_conversation())
        row = (await conn.execute(query)).first()
        return None if row is None else _to_conversation(row)

    async def update_conversation_metadata(
        self, conversation_id: str, patch: Mapping[str, str | None] | None
    ) -> Conversation | None:
        async with self._writing() as conn:
            query = select(conversations).where(conversations.c.id == conversation_id, *self._live_conversation())
            row = (await conn.execute(query.with_for_update())).first()
            if row is None:
                return None
            merged: dict[str, str] = {} if patch is None else orjson.loads(row.metadata)
            for key, value in (patch or {}).items():
                if value is None:
                    merged.pop(key, None)
                else:
                    merged[key] = value
            try:
                check_metadata(merged)
            except ValueError as exc:
                raise InvalidRequest(f"Invalid 'metadata': {exc}.", param="metadata", code="invalid_value") from exc
            await conn.execute(
                update(conversations)
                .where(conversations.c.id == conversation_id)
                .values(metadata=orjson.dumps(merged).decode())
            )
        return Conversation(id=row.id, created_at=row.created_at, metadata=merged)

    async def delete_conversation(self, conversation_id: str) -> bool:
        async with self._writing() as conn:
            if await self._fetch_conversation(conn, conversation_id) is None:
                return False
            return await self._delete_conversations(conn, [conversation_id]) > 0

    async def _delete_conversations(self, conn: AsyncConnection, ids: list[str]) -> int:
        if not ids:
            return 0
        await conn.execute(delete(conversation_items).where(conversation_items.c.conversation_id.in_(ids)))
        deleted = await conn.execute(delete(conversations).where(conversations.c.id.in_(ids)))
        return int(deleted.rowcount)

    async def append_conversation_items(self, conversation_id: str, items: Sequence[Item]) -> bool:
        if await self.get_conversation(conversation_id) is None:
            return False
        async with self._writing() as conn:
            return await append_items(conn, conversation_id, items)

    async def list_conversation_items(
        self, conversation_id: str, *, limit: int, order: Order, after: str | None, before: str | None
    ) -> ItemPage | None:
        async with self._engine.connect() as conn:
            if await self._fetch_conversation(conn, conversation_id) is None:
                return None
            scope = [conversation_items.c.conversation_id == conversation_id]
            return await item_page(
                conn, conversation_items, scope, limit=limit, order=order, after=after, before=before
            )

    async def get_conversation_item(self, conversation_id: str, item_id: str) -> Item | None:
        async with self._engine.connect() as conn:
            if await self._fetch_conversation(conn, conversation_id) is None:
                return None
            body = (await conn.execute(self._item_body(conversation_id, item_id))).scalar()
        return None if body is None else load_item(body)

    def _item_body(self, conversation_id: str, item_id: str) -> Any:
        column = conversation_items.c
        return select(column.body).where(column.conversation_id == conversation_id, column.item_id == item_id).limit(1)

    async def delete_conversation_item(self, conversation_id: str, item_id: str) -> bool:
        column = conversation_items.c
        async with self._writing() as conn:
            if await self._fetch_conversation(conn, conversation_id) is None:
                return False
            deleted = await conn.execute(
                delete(conversation_items).where(column.conversation_id == conversation_id, column.item_id == item_id)
            )
        return bool(deleted.rowcount)

    async def load_conversation(self, conversation_id: str) -> list[Item] | None:
        column = conversation_items.c
        async with self._engine.connect() as conn:
            if await self._fetch_conversation(conn, conversation_id) is None:
                return None
            rows = await conn.execute(
                select(column.body).where(column.conversation_id == conversation_id).order_by(column.position)
            )
            return [load_item(body) for (body,) in rows]

    async def _sweep_conversations(self, conn: AsyncConnection) -> int:
        ttl = self.retention.conversation_ttl
        if not ttl:
            return 0
        expired = select(conversations.c.id).where(conversations.c.stored_at < time.time() - ttl)
        return await self._delete_conversations(conn, [r for (r,) in await conn.execute(expired)])
