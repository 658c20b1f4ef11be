"""Conversations: a durable, ordered list of items that responses read from and append to."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from ._base import WireModel
from ._items import Item
from ._metadata import Metadata, MetadataPatch

__all__ = [
    "MAX_ITEMS_PER_REQUEST",
    "Conversation",
    "CreateConversationItemsRequest",
    "CreateConversationRequest",
    "UpdateConversationRequest",
]

MAX_ITEMS_PER_REQUEST = 20


class Conversation(WireModel):
    """A conversation; its items are listed separately."""

    id: str
    object: Literal["conversation"] = "conversation"
    created_at: int
    metadata: dict[str, str] = Field(default_factory=dict)


class CreateConversationRequest(WireModel):
    """Body of ``POST /v1/conversations``."""

    metadata: Metadata | None = None
    items: list[Item] | None = Field(default=None, max_length=MAX_ITEMS_PER_REQUEST)


class UpdateConversationRequest(WireModel):
    """Body of ``POST /v1/conversations/{id}``: merged into the metadata; a ``null`` value deletes its key.

    ``metadata: null`` clears all metadata.
    """

    metadata: MetadataPatch | None


class CreateConversationItemsRequest(WireModel):
    """Body of ``POST /v1/conversations/{id}/items``."""

    items: list[Item] = Field(min_length=1, max_length=MAX_ITEMS_PER_REQUEST)
