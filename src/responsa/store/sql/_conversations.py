"""Conversation queries of the SQL store (mixed into :class:`~responsa.store.SqlStore`)."""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from typing import Any

import orjson
from sqlalchemy import delete, select

from responsa.protocol import Conversation, InvalidRequest, Item, check_metadata

from .._base import ItemPage, Order, Retention
from . import _statements as sql
from ._context_cache import ContextCache, ConversationSnapshot
from ._database import Database, Sql
from ._paging import dump_item, item_page, load_item
from ._tables import conversation_items, conversations

__all__ = ["SqlConversations", "append_items", "conversation_rows", "live"]


def conversation_rows(items: Sequence[Item]) -> list[tuple[str | None, str]]:
    """Items as the rows :func:`append_items` writes (id, body), dumped when the write is asked for: a
    write may wait for its batch while the caller goes on, and it must store what it was given."""
    return [(item.id, dump_item(item)) for item in items]


def append_items(conn: Sql, conversation_id: str, items: Sequence[tuple[str | None, str]]) -> bool:
    """Append after the current last item, inside the caller's transaction (which holds the row lock);
    ``items`` as :func:`conversation_rows` dumped them."""
    where = {"conversation_id": conversation_id}
    if conn.execute(sql.LOCK_CONVERSATION, where).first() is None:
        return False
    if not items:
        return True
    start = conn.execute(sql.NEXT_POSITION, where).scalar_one()
    rows = [
        {"conversation_id": conversation_id, "position": start + i, "item_id": item_id, "body": body}
        for i, (item_id, body) in enumerate(items)
    ]
    conn.execute(sql.INSERT_CONVERSATION_ITEMS, rows)
    return True


def _to_conversation(row: Sequence[Any]) -> Conversation:
    conversation_id, created_at, metadata = row
    return Conversation(id=conversation_id, created_at=created_at, metadata=orjson.loads(metadata))


def live(tenant: str, ttl: float) -> dict[str, Any]:
    """Parameters that limit a lookup to ``tenant``'s objects that have not expired."""
    return {"tenant": tenant, "oldest": time.time() - ttl if ttl else -1.0}


class SqlConversations:
    """The conversations of ``tenant`` and their items, on the store's database, with the snapshots of
    their contexts the store keeps (shared by every tenant's view, keyed by tenant)."""

    def __init__(
        self, db: Database, tenant: str, retention: Retention, snapshots: ContextCache[ConversationSnapshot]
    ) -> None:
        self._db = db
        self.tenant = tenant
        self.retention = retention
        self._conversation_contexts = snapshots

    def scoped(self, tenant: str) -> SqlConversations:
        return SqlConversations(self._db, tenant, self.retention, self._conversation_contexts)

    def _live_conversation(self, conversation_id: str) -> dict[str, Any]:
        """Parameters that find the conversation only if it is this tenant's and has not expired."""
        return {"conversation_id": conversation_id, **live(self.tenant, self.retention.conversation_ttl)}

    async def create_conversation(self, conversation: Conversation, items: Sequence[Item]) -> None:
        row = self._row(conversation)
        conversation_id, dumped = conversation.id, conversation_rows(items)

        def work(conn: Sql) -> None:
            conn.execute(sql.INSERT_CONVERSATION, [row])
            append_items(conn, conversation_id, dumped)
            self._evict(conn)

        await self._db.write(work)

    async def id_taken(self, conversation_id: str) -> bool:
        where = {"conversation_id": conversation_id}
        return await self._db.read(lambda conn: conn.execute(sql.CONVERSATION_TENANT, where).first() is not None)

    def begin_in(self, conn: Sql, conversation_id: str) -> bool:
        """Inside a response's save: begin the client-named conversation ``conversation_id`` with the
        turn being saved, unless it exists (two first uses at once begin one); whether it is this
        tenant's, as the turn may be appended only then. A later turn finds it and reads one row."""
        where = {"conversation_id": conversation_id}
        owner = conn.execute(sql.CONVERSATION_TENANT, where).scalar()
        if owner is None:
            new = self._row(Conversation(id=conversation_id, created_at=int(time.time())))
            conn.execute(sql.INSERT_CONVERSATION_IF_NEW, [new])
            self._evict(conn)
            owner = conn.execute(sql.CONVERSATION_TENANT, where).scalar()
        return bool(owner == self.tenant)

    def _row(self, conversation: Conversation) -> dict[str, Any]:
        return {
            "id": conversation.id,
            "created_at": conversation.created_at,
            "stored_at": time.time(),
            "metadata": orjson.dumps(conversation.metadata).decode(),
            "tenant": self.tenant,
        }

    def _evict(self, conn: Sql) -> None:
        """Past the cap, the oldest conversations go."""
        cap = self.retention.conversation_max_entries
        if cap:
            evicted = select(conversations.c.id).order_by(conversations.c.stored_at.desc()).offset(cap)
            self.delete_conversations(conn, list(conn.execute(evicted).scalars()))

    async def get_conversation(self, conversation_id: str) -> Conversation | None:
        return await self._db.read(lambda conn: self._fetch_conversation(conn, conversation_id))

    def _fetch_conversation(self, conn: Sql, conversation_id: str) -> Conversation | None:
        row = conn.execute(sql.CONVERSATION, self._live_conversation(conversation_id)).first()
        return None if row is None else _to_conversation(row)

    async def update_conversation_metadata(
        self, conversation_id: str, patch: Mapping[str, str | None] | None
    ) -> Conversation | None:
        def work(conn: Sql) -> Conversation | None:
            row = conn.execute(sql.CONVERSATION_FOR_UPDATE, self._live_conversation(conversation_id)).first()
            if row is None:
                return None
            current = _to_conversation(row)
            merged: dict[str, str] = {} if patch is None else dict(current.metadata or {})
            for key, value in (patch or {}).items():
                if value is None:
                    merged.pop(key, None)
                else:
                    merged[key] = value
            try:
                check_metadata(merged)
            except ValueError as exc:
                raise InvalidRequest(f"Invalid 'metadata': {exc}.", param="metadata", code="invalid_value") from exc
            conn.execute(sql.SET_METADATA, {"conversation_id": conversation_id, "new": orjson.dumps(merged).decode()})
            return current.model_copy(update={"metadata": merged})

        return await self._db.write(work)

    async def delete_conversation(self, conversation_id: str) -> bool:
        def work(conn: Sql) -> bool:
            if self._fetch_conversation(conn, conversation_id) is None:
                return False
            return self.delete_conversations(conn, [conversation_id]) > 0

        return await self._db.write(work)

    def delete_conversations(self, conn: Sql, ids: list[str]) -> int:
        if not ids:
            return 0
        # The conversations first: the trigger counting their items' removal then has no row to update.
        deleted = conn.execute(delete(conversations).where(conversations.c.id.in_(ids)))
        conn.execute(delete(conversation_items).where(conversation_items.c.conversation_id.in_(ids)))
        return int(deleted.rowcount)

    async def append_conversation_items(self, conversation_id: str, items: Sequence[Item]) -> bool:
        dumped = conversation_rows(items)

        def work(conn: Sql) -> bool:
            if self._fetch_conversation(conn, conversation_id) is None:
                return False
            return append_items(conn, conversation_id, dumped)

        return await self._db.write(work)

    async def list_conversation_items(
        self, conversation_id: str, *, limit: int, order: Order, after: str | None, before: str | None
    ) -> ItemPage | None:
        scope = [conversation_items.c.conversation_id == conversation_id]

        def work(conn: Sql) -> ItemPage | None:
            if self._fetch_conversation(conn, conversation_id) is None:
                return None
            return item_page(conn, conversation_items, scope, limit=limit, order=order, after=after, before=before)

        return await self._db.read(work)

    async def get_conversation_item(self, conversation_id: str, item_id: str) -> Item | None:
        where = {"conversation_id": conversation_id, "item_id": item_id}

        def work(conn: Sql) -> str | None:
            if self._fetch_conversation(conn, conversation_id) is None:
                return None
            body: str | None = conn.execute(sql.CONVERSATION_ITEM, where).scalar()
            return body

        body = await self._db.read(work)
        return None if body is None else load_item(body)

    async def delete_conversation_item(self, conversation_id: str, item_id: str) -> bool:
        where = {"conversation_id": conversation_id, "item_id": item_id}

        def work(conn: Sql) -> bool:
            # The conversation's row is locked first, as an append and a deletion of the conversation
            # lock it: the trigger counting the removal updates that row (no lock taken in two orders).
            if conn.execute(sql.CONVERSATION_FOR_UPDATE, self._live_conversation(conversation_id)).first() is None:
                return False
            return bool(conn.execute(sql.DELETE_CONVERSATION_ITEM, where).rowcount)

        return await self._db.write(work)

    async def load_conversation(self, conversation_id: str) -> list[Item] | None:
        """Every item; those read before (the snapshot of the last read in this process) are not
        parsed again while no item has left the conversation since: items are appended after the last
        position and never changed, and the database counts every removal (migration 0011), so the
        check is one column of the conversation's row whatever its length. The count is read before
        the items: a removal between the two reads leaves a snapshot that the next read discards."""
        snapshot = self._conversation_contexts.get(self.tenant, conversation_id)

        def work(conn: Sql) -> tuple[int, ConversationSnapshot | None, list[Any]] | None:
            row = conn.execute(sql.CONVERSATION_ITEMS_REMOVED, self._live_conversation(conversation_id)).first()
            if row is None:
                return None
            removed = row[0]
            kept = snapshot if snapshot is not None and snapshot.items_removed == removed else None
            after = {"conversation_id": conversation_id, "position": -1 if kept is None else kept.last_position}
            return removed, kept, list(conn.execute(sql.CONVERSATION_ITEMS_AFTER, after).all())

        found = await self._db.read(work)
        if found is None:
            return None
        removed, kept, rows = found
        items = (*(() if kept is None else kept.items), *(load_item(body) for _position, body in rows))
        if rows or kept is None:
            snapshot = ConversationSnapshot(rows[-1][0] if rows else -1, removed, items)
            self._conversation_contexts.put(self.tenant, conversation_id, snapshot)
        return list(items)

    def sweep(self, conn: Sql) -> int:
        ttl = self.retention.conversation_ttl
        if not ttl:
            return 0
        expired = select(conversations.c.id).where(conversations.c.stored_at < time.time() - ttl)
        return self.delete_conversations(conn, list(conn.execute(expired).scalars()))
