"""Recently built chain contexts, so turn N of a ``previous_response_id`` chain parses one response's
items from the database instead of all N.

Only finished responses are kept (their items never change again). Any deletion in this process
(API, retention sweep, entry cap) empties the cache, so it never outlives what the database says;
a replica deleting a response in the middle of a chain is not seen here until the entry ages out.
"""

from __future__ import annotations

from collections import OrderedDict

from responsa.protocol import Item

__all__ = ["ContextCache"]


class ContextCache:
    """Least recently used first out, at most ``size`` contexts (items are shared between them)."""

    def __init__(self, size: int = 512) -> None:
        self._size = size
        self._contexts: OrderedDict[tuple[str, str], tuple[Item, ...]] = OrderedDict()

    def get(self, tenant: str, response_id: str) -> tuple[Item, ...] | None:
        context = self._contexts.get((tenant, response_id))
        if context is not None:
            self._contexts.move_to_end((tenant, response_id))
        return context

    def put(self, tenant: str, response_id: str, context: tuple[Item, ...]) -> None:
        self._contexts[(tenant, response_id)] = context
        self._contexts.move_to_end((tenant, response_id))
        if len(self._contexts) > self._size:
            self._contexts.popitem(last=False)

    def clear(self) -> None:
        self._contexts.clear()
