"""What was made of the contexts sent lately, for their next turn.

The next turn of a WebSocket ``store: false`` chain, a ``previous_response_id`` chain or a
conversation begins with the same item objects as the last (the connection's cache and the store's
context caches hand them out again). Whatever is made of a context by reading every item (its chat
messages, the facts its checks read) can then be made from what was kept and the new items alone: a
context is found by the ``id()`` of its first item, and how many of its items are the kept ones is
found at C speed: all but the kept context's last few items by a list comparison, which tries identity
first (~4 ns an item), and those last ones (where a stored chain's next turn parts from it, if
anywhere) by one identity comparison each (~14 ns). An item the list comparison
meets that is not the kept one but equal to it (read back anew, the same fields) counts as kept: what
is made of an item is made of its fields. Items are held beside what was made of them, so that no
other object can take their ``id()`` while they are here.
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


_NEAR_END = 32
"""Where a context parts from the kept one, it most often does within this many of the kept one's last
items: those are compared one by one, the rest at once."""


def _same_start(start: list[Item], items: Sequence[Item], count: int) -> bool:
    """Whether the first ``count`` (> 0) items of ``start`` and ``items`` are the same (or equal)."""
    if count <= 0 or count > len(items):
        return False
    head = items[:count]
    return start[:count] == (head if type(head) is list else list(head))


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
        # All but the kept context's last items at once; they part, if at all, most often among those
        # (a stored chain's last turn, read back from the store as new objects), looked at one by one.
        known = len(start) - _NEAR_END
        if not _same_start(start, items, known):
            known = 0  # they part further back (a branch, a truncation): every item is looked at
        rest = (start[known:], items[known:]) if known else (start, items)
        try:  # the first item that is not the kept one (operator.indexOf: a C loop)
            same = known + indexOf(map(is_not, *rest), True)
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
