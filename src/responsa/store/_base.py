"""The storage interface: a few async methods that SQLite and PostgreSQL both implement."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal, Protocol

from responsa.protocol import Item, ResponseObject

__all__ = ["ItemPage", "Order", "Store"]

Order = Literal["asc", "desc"]


@dataclass(frozen=True)
class ItemPage:
    """One page of a listing; ``has_more`` says whether a next page exists."""

    items: list[Item]
    has_more: bool


class Store(Protocol):
    """Durable responses and their items. Ids come from the engine; rows belong to the store."""

    async def migrate(self) -> None:
        """Bring the schema up to date (idempotent)."""

    async def save_response(self, response: ResponseObject, input_items: Sequence[Item] | None = None) -> None:
        """Insert or replace a response and its output; ``input_items`` are written on first save."""

    async def get_response(self, response_id: str) -> ResponseObject | None: ...

    async def delete_response(self, response_id: str) -> bool:
        """Remove a response and its items; False when it did not exist."""

    async def list_input_items(
        self, response_id: str, *, limit: int, order: Order, after: str | None, before: str | None
    ) -> ItemPage | None:
        """A page of the response's input items, or None when the response does not exist."""

    async def load_context(self, response_id: str) -> list[Item] | None:
        """Inputs and outputs of the response and all its predecessors, oldest first; None if absent."""

    async def get_item(self, item_id: str) -> Item | None:
        """Any stored input or output item by id (for ``item_reference``)."""

    async def aclose(self) -> None: ...
