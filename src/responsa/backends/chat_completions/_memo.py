"""What the long contexts sent lately were translated into, for their next turn.

The next turn of a conversation or a ``previous_response_id`` chain begins with the same item objects
as the last (the store's context caches hand them out again), and in a long history reading an item
again costs a cache miss per field. So a context's chat messages are kept by its first item, and a
context that begins with all the items of one kept is translated only past them: the check is one
identity comparison per item, at C speed. Past that, the chat message of each finished message item
is kept by the item (a context whose start changed, by truncation or compaction, still finds them).

Items are held beside what was made of them, so that no other object can take their ``id()`` while
they are here. What is kept is never changed: a function call that joins a kept message copies it.
Only finished items are kept (an open one, being built, still changes).
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from itertools import compress, count
from operator import is_not
from typing import Any

from responsa.protocol import Item, Message

__all__ = ["ChatMessage", "Translate", "TranslationMemo"]

ChatMessage = dict[str, Any]

Translate = Callable[[Item, list[ChatMessage]], None]
"""Adds what a chat model reads of an item to the messages so far (or joins it to the last)."""


class TranslationMemo:
    """The chat messages of long contexts and of their message items (see the module's docstring),
    ``size`` items of each at most (a few MB, with the items they hold); past it the oldest go."""

    def __init__(self, size: int = 8_192) -> None:
        self._size = size
        self._messages: dict[int, tuple[Item, ChatMessage]] = {}
        self._contexts: dict[int, _Kept] = {}
        """By the ``id()`` of their first item."""
        self._held = 0
        """Items held by ``_contexts``."""

    def messages(self, items: Sequence[Item], translate: Translate) -> list[ChatMessage]:
        """``items`` as chat messages, translating with ``translate`` only what is not kept."""
        if not items:
            return []
        kept = self._known_start(items)
        messages, starts, counts = kept.messages, kept.starts, kept.counts
        settled: _Kept | None = None
        for index in range(len(kept.items), len(items)):
            item = items[index]
            if settled is None and getattr(item, "status", None) == "in_progress":
                settled = _Kept(list(items[:index]), messages[:], starts[:], counts[:])  # kept: what came before
            if type(item) is Message:  # it starts a message of its own, which nothing before it changes
                starts.append(index)
                counts.append(len(messages))
            known = self._messages.get(id(item))
            if known is not None:
                messages.append(known[1])
                continue
            translate(item, messages)
            if type(item) is Message and item.status != "in_progress":
                self._keep_message(item, messages[-1])
        self._keep_context(settled or _Kept(list(items), messages[:], starts, counts))
        return messages

    def _known_start(self, items: Sequence[Item]) -> _Kept:
        """The longest start of ``items`` that a kept context's messages cover: all of that context when
        ``items`` begin with all of it, else up to the last message item before they part (what comes
        after it may have joined its message). A copy, to be extended."""
        kept = self._contexts.get(id(items[0]))
        if kept is None:
            return _Kept([], [], [], [])
        shorter = min(len(kept.items), len(items))
        same = next(compress(count(), map(is_not, kept.items, items)), shorter)
        if same == len(kept.items):
            return _Kept(kept.items, list(kept.messages), list(kept.starts), list(kept.counts))
        last = bisect_right(kept.starts, same) - 1  # the last message item at or before the first that differs
        if last < 0:
            return _Kept([], [], [], [])
        start = kept.starts[last]
        return _Kept(kept.items[:start], kept.messages[: kept.counts[last]], kept.starts[:last], kept.counts[:last])

    def _keep_message(self, item: Message, message: ChatMessage) -> None:
        if len(self._messages) >= self._size:
            self._messages.clear()
        self._messages[id(item)] = (item, message)

    def _keep_context(self, kept: _Kept) -> None:
        if not kept.items:
            return
        key = id(kept.items[0])
        replaced = self._contexts.pop(key, None)
        if replaced is not None:
            self._held -= len(replaced.items)
        while self._contexts and self._held + len(kept.items) > self._size:
            self._held -= len(self._contexts.pop(next(iter(self._contexts))).items)  # the oldest
        if len(kept.items) <= self._size:
            self._contexts[key] = kept
            self._held += len(kept.items)


@dataclass(slots=True)
class _Kept:
    """A context's start and its chat messages; ``starts``: where each message item is in ``items``,
    and ``counts``: how many messages come before its own (a place to cut both at)."""

    items: list[Item]
    messages: list[ChatMessage]
    starts: list[int]
    counts: list[int]
