"""What was made of the contexts sent lately, for their next turn.

The next turn of a WebSocket ``store: false`` chain, a ``previous_response_id`` chain or a
conversation begins with the same item objects as the last (the connection's cache and the store's
context caches hand them out again). Whatever is made of a context by reading every item (its chat
messages, the facts its checks read) can then be made from what was kept and the new items alone: a
context is found by the ``id()`` of its first item, and how many of its items are the kept ones is
one identity comparison per item, at C speed. Items are held beside what was made of them, so that
no other object can take their ``id()`` while they are here.
"""

from __future__ import annotations

from collections.abc import Sequence
from operator import indexOf, is_not
from typing import Generic, TypeVar

from ._items import Item

__all__ = ["LONG_CONTEXT", "KeptContexts"]

T = TypeVar("T")

LONG_CONTEXT = 64
"""Items from which what is made of a context is worth keeping: a short one is read in microseconds,
and most requests (one turn, a few items) would only fill the memos."""


class KeptContexts(Generic[T]):
    """Values made from contexts, ``size`` items of contexts at most (past it the oldest go)."""

    def __init__(self, size: int = 8_192) -> None:
        self._size = size
        self._kept: dict[int, tuple[list[Item], T]] = {}
        """By the ``id()`` of their first item: the context's items and what was made of them."""
        self._held = 0
        """Items held."""

    def find(self, items: Sequence[Item]) -> tuple[list[Item], T, int] | None:
        """The kept context ``items`` begins like (its items and value), and how many of ``items``
        are its items, from the first; None when none was kept by their first item."""
        if not items:
            return None
        kept = self._kept.get(id(items[0]))
        if kept is None:
            return None
        start, value = kept
        try:  # the first item that is not the kept one (operator.indexOf: a C loop, ~14 ns an item)
            same = indexOf(map(is_not, start, items), True)
        except ValueError:
            same = min(len(start), len(items))
        return start, value, same

    def keep(self, items: list[Item], value: T) -> None:
        """Keep ``value`` as what was made of ``items`` (which are not changed afterwards)."""
        if not items:
            return
        key = id(items[0])
        replaced = self._kept.pop(key, None)
        if replaced is not None:
            self._held -= len(replaced[0])
        while self._kept and self._held + len(items) > self._size:
            self._held -= len(self._kept.pop(next(iter(self._kept)))[0])  # the oldest
        if len(items) <= self._size:
            self._kept[key] = (items, value)
            self._held += len(items)
