"""The conversations service: create, read, update, delete conversations and their items."""

from __future__ import annotations

import time

from responsa.protocol import (
    Conversation,
    CreateConversationItemsRequest,
    CreateConversationRequest,
    InvalidRequest,
    Item,
    NotFound,
    UpdateConversationRequest,
    new_id,
)
from responsa.store import ItemPage, Order, Store

from ..tools import ToolRegistry
from ._context import conversation_items, resolve_items

__all__ = ["ConversationService"]


def _not_found(conversation_id: str) -> NotFound:
    return NotFound(f"Conversation with id '{conversation_id}' not found.", param="conversation_id")


class ConversationService:
    """Conversations live entirely in the store; this layer checks, fills in ids and raises 404s."""

    def __init__(self, store: Store, kinds: ToolRegistry) -> None:
        self._store = store
        self._kinds = kinds

    def for_tenant(self, tenant: str) -> ConversationService:
        """The same service over ``tenant``'s conversations only."""
        return ConversationService(self._store.scoped(tenant), self._kinds)

    async def create(self, request: CreateConversationRequest) -> Conversation:
        if not self._store.retention.conversations_enabled:
            raise InvalidRequest("Conversation storage is disabled on this server.", code="conversations_disabled")
        items = await resolve_items(self._store, request.items or [], "items", self._kinds, copies=True)
        items = conversation_items(items, self._kinds)
        conversation = Conversation(id=new_id("conv"), created_at=int(time.time()), metadata=request.metadata or {})
        await self._store.conversations().create_conversation(conversation, items)
        return conversation

    async def get(self, conversation_id: str) -> Conversation:
        conversation = await self._store.conversations().get_conversation(conversation_id)
        if conversation is None:
            raise _not_found(conversation_id)
        return conversation

    async def update(self, conversation_id: str, request: UpdateConversationRequest) -> Conversation:
        conversation = await self._store.conversations().update_conversation_metadata(conversation_id, request.metadata)
        if conversation is None:
            raise _not_found(conversation_id)
        return conversation

    async def delete(self, conversation_id: str) -> None:
        if not await self._store.conversations().delete_conversation(conversation_id):
            raise _not_found(conversation_id)

    async def add_items(self, conversation_id: str, request: CreateConversationItemsRequest) -> list[Item]:
        await self.get(conversation_id)
        items = await resolve_items(self._store, request.items, "items", self._kinds, copies=True)
        items = conversation_items(items, self._kinds)
        if not await self._store.conversations().append_conversation_items(conversation_id, items):
            raise _not_found(conversation_id)
        return items

    async def list_items(
        self, conversation_id: str, *, limit: int, order: Order, after: str | None, before: str | None
    ) -> ItemPage:
        page = await self._store.conversations().list_conversation_items(
            conversation_id, limit=limit, order=order, after=after, before=before
        )
        if page is None:
            raise _not_found(conversation_id)
        return page

    async def get_item(self, conversation_id: str, item_id: str) -> Item:
        item = await self._store.conversations().get_conversation_item(conversation_id, item_id)
        if item is None:
            await self.get(conversation_id)
            raise NotFound(f"Item with id '{item_id}' not found in conversation.", param="item_id")
        return item

    async def delete_item(self, conversation_id: str, item_id: str) -> Conversation:
        conversation = await self.get(conversation_id)
        if not await self._store.conversations().delete_conversation_item(conversation_id, item_id):
            raise NotFound(f"Item with id '{item_id}' not found in conversation.", param="item_id")
        return conversation
