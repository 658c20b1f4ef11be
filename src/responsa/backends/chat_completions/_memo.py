"""What the long contexts sent lately were translated into, for their next turn.

In a long history reading an item again costs a cache miss per field. So a context's chat messages,
and their JSON, are kept (``KeptContexts``: by its first item, the same objects on the next turn of a
chain or a conversation), and a context that begins with the items of one kept is translated and
encoded only past them. Where the two part (a conversation's
last input comes back from the database as new objects), what is kept is cut at the last message item
before that: nothing after a message item changes the messages before its own. Past that, the chat
message of each finished message item is kept by the item (a context whose start changed, by
truncation or compaction, still finds them).

Message items are held beside their chat messages, so that no other object can take their ``id()``
while they are here. What is kept is never changed: a function call that joins a kept message copies it.
Only finished items are kept (an open one, being built, still changes).
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from itertools import accumulate
from typing import Any

import orjson

from responsa.protocol import Item, KeptContexts, Message

__all__ = ["ChatMessage", "Translate", "Translation", "TranslationMemo"]

ChatMessage = dict[str, Any]

Translate = Callable[[Item, list[ChatMessage]], None]
"""Adds what a chat model reads of an item to the messages so far (or joins it to the last)."""


@dataclass(frozen=True, slots=True)
class Translation:
    """A context's chat messages, and their JSON: the array's elements, comma-separated, no brackets."""

    messages: list[ChatMessage]
    elements: bytes | memoryview


class TranslationMemo:
    """The chat messages of long contexts and of their message items (see the module's docstring),
    ``size`` items of each at most (a few MB, with the items they hold); past it the oldest go."""

    def __init__(self, size: int = 8_192) -> None:
        self._size = size
        self._messages: dict[int, tuple[Item, ChatMessage]] = {}
        self._contexts = KeptContexts[_Kept](size)

    def translate(self, items: Sequence[Item], translate: Translate) -> Translation:
        """``items`` as chat messages, translating with ``translate`` and encoding only what is not kept."""
        if not items:
            return Translation([], b"")
        kept = self._known_start(items)
        messages, starts, counts = kept.messages, kept.starts, kept.counts
        settled: _Kept | None = None
        joined_at = len(items) + len(messages)  # the first message a function call joined (and so replaced)
        for index in range(len(kept.items), len(items)):
            item = items[index]
            if settled is None and getattr(item, "status", None) == "in_progress":
                settled = _Kept(list(items[:index]), messages[:], starts[:], counts[:], _NOTHING)
            if type(item) is Message:  # it starts a message of its own, which nothing before it changes
                starts.append(index)
                counts.append(len(messages))
            known = self._messages.get(id(item))
            if known is not None:
                messages.append(known[1])
                continue
            last = len(messages) - 1
            before = messages[last] if messages else None
            translate(item, messages)
            if before is not None and messages[last] is not before:
                joined_at = min(joined_at, last)
            elif type(item) is Message and item.status != "in_progress":
                self._keep_message(item, messages[-1])
        encoded = kept.encoded.cut(joined_at).extended(messages)
        if settled is not None:
            settled.encoded = encoded.cut(min(len(settled.messages), joined_at))
        kept_now = settled or _Kept(list(items), messages[:], starts, counts, encoded)
        self._contexts.keep(kept_now.items, kept_now)
        return Translation(messages, encoded.json)

    def _known_start(self, items: Sequence[Item]) -> _Kept:
        """The longest start of ``items`` that a kept context's messages cover: all of that context when
        ``items`` begin with all of it, else up to the last message item before they part (what comes
        after it may have joined its message). A copy, to be extended."""
        found = self._contexts.find(items)
        if found is None:
            return _Kept([], [], [], [], _NOTHING)
        _items, kept, same = found
        if same == len(kept.items):
            return _Kept(kept.items, list(kept.messages), list(kept.starts), list(kept.counts), kept.encoded)
        last = bisect_right(kept.starts, same) - 1  # the last message item at or before the first that differs
        if last < 0:
            return _Kept([], [], [], [], _NOTHING)
        start, before = kept.starts[last], kept.counts[last]
        cut = kept.encoded.cut(before)
        return _Kept(kept.items[:start], kept.messages[:before], kept.starts[:last], kept.counts[:last], cut)

    def _keep_message(self, item: Message, message: ChatMessage) -> None:
        if len(self._messages) >= self._size:
            self._messages.clear()
        self._messages[id(item)] = (item, message)


@dataclass(slots=True)
class _Kept:
    """A context's start, its chat messages and their JSON; ``starts``: where each message item is in
    ``items``, and ``counts``: how many messages come before its own (a place to cut them at)."""

    items: list[Item]
    messages: list[ChatMessage]
    starts: list[int]
    counts: list[int]
    encoded: _Encoded


@dataclass(frozen=True, slots=True)
class _Encoded:
    """The JSON of a context's first ``count`` messages (the array's elements, comma-separated), and the
    places it can be cut at: ``marks`` (message counts, ascending) and ``offsets`` (their ends in ``json``)."""

    count: int
    json: bytes | memoryview
    marks: tuple[int, ...]
    offsets: tuple[int, ...]

    def cut(self, count: int) -> _Encoded:
        """The JSON of the messages before the last mark at or before ``count``."""
        if count >= self.count:
            return self
        last = bisect_right(self.marks, count) - 1
        if last < 0:
            return _NOTHING
        end = self.offsets[last]
        # A view, not a copy: the next join copies it once, into the body (some 100 kB a late turn).
        return _Encoded(self.marks[last], memoryview(self.json)[:end], self.marks[: last + 1], self.offsets[: last + 1])

    def extended(self, messages: list[ChatMessage]) -> _Encoded:
        """The JSON of ``messages``, which begin with those encoded here. The new ones are encoded in
        one piece (a cut in it is encoded again), but for the last few one by one: the next turn most
        often cuts among them (where its last input comes back as new objects, or a call joins)."""
        if self.count == len(messages):
            return self
        bulk = max(len(messages) - _ONE_BY_ONE, self.count)
        pieces = [orjson.dumps(messages[self.count : bulk])[1:-1]] if bulk > self.count else []
        pieces += [orjson.dumps(message) for message in messages[bulk:]]
        marks = (bulk,) * (bulk > self.count) + tuple(range(bulk + 1, len(messages) + 1))
        json = b",".join([self.json, *pieces] if self.json else pieces)
        sizes = [len(piece) + 1 for piece in pieces]  # each after a comma (the first's, if any, at the start)
        ends = tuple(accumulate(sizes, initial=len(self.json) - (0 if self.json else 1)))[1:]
        return _Encoded(len(messages), json, self.marks + marks, self.offsets + ends)


_ONE_BY_ONE = 8
"""The last new messages encoded one by one (see :meth:`_Encoded.extended`)."""

_NOTHING = _Encoded(0, b"", (0,), (0,))
