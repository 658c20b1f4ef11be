"""Recently built contexts, so a turn parses only what is new since the last one: turn N of a
``previous_response_id`` chain parses one response's items from the database instead of all N, and
a turn in a conversation only the items appended since the conversation was last read.

Only finished responses are kept (their items never change again). Any deletion in this process
(API, retention sweep, entry cap) empties the cache, so it never outlives what the database says;
a replica deleting a response in the middle of a chain is not seen here until the entry ages out.
A conversation's snapshot is checked against the database on every read (see ``load_conversation``).
"""

from __future__ import annotations

from collections import OrderedDict
from dataclasses import dataclass
from typing import Generic, TypeVar

from responsa.protocol import Item

__all__ = ["ContextCache", "ConversationSnapshot"]

V = TypeVar("V")


@dataclass(frozen=True)
class ConversationSnapshot:
    """A conversation's items as read up to ``last_position``, when the database had counted
    ``items_removed`` removals from it: while that count stands, they are still its first items."""

    last_position: int
    items_removed: int
    items: tuple[Item, ...]


class ContextCache(Generic[V]):
    """Least recently used first out, at most ``size`` contexts (items are shared between them)."""

    def __init__(self, size: int = 512) -> None:
        self._size = size
        self._contexts: OrderedDict[tuple[str, str], V] = OrderedDict()

    def get(self, tenant: str, response_id: str) -> V | None:
        context = self._contexts.get((tenant, response_id))
        if context is not None:
            self._contexts.move_to_end((tenant, response_id))
        return context

    def put(self, tenant: str, response_id: str, context: V) -> None:
        self._contexts[(tenant, response_id)] = context
        self._contexts.move_to_end((tenant, response_id))
        if len(self._contexts) > self._size:
            self._contexts.popitem(last=False)

    def clear(self) -> None:
        self._contexts.clear()
