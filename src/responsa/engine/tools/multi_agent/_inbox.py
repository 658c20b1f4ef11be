"""What the client sends into a running response (``response.inject`` on the WebSocket): the outputs of
the calls its agents wait on, by the call they answer. Outputs may come before the wait for them begins
(the client answers as soon as it sees the call); each is taken once."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable, Sequence
from typing import Any

from pydantic import TypeAdapter, ValidationError

from responsa.protocol import Item, new_id

__all__ = ["Inbox", "answered_key", "awaited_key", "injected"]

_ITEMS: TypeAdapter[list[Item]] = TypeAdapter(list[Item])


def awaited_key(item: Item) -> str:
    """What an answer to a waiting item names: a call's ``call_id``, an approval request's ``id``."""
    return str(getattr(item, "call_id", None) or getattr(item, "id", None) or "")


def answered_key(item: Item) -> str | None:
    """The waiting item an injected one answers (a call output's ``call_id``, an approval response's
    ``approval_request_id``); None for an item that answers nothing."""
    found = getattr(item, "call_id", None) or getattr(item, "approval_request_id", None)
    return found if isinstance(found, str) and found else None


def injected(given: Any, id_prefix: Callable[[str], str | None]) -> list[Item] | None:
    """The items of a ``response.inject`` as output items (an id of their kind's prefix, ``completed``
    where they have a status and none was sent): answers (call outputs, approval responses) only; None
    for anything else (OpenAI takes only the outputs of the calls a response waits on)."""
    if not isinstance(given, list) or not given:
        return None
    try:
        items = _ITEMS.validate_python(given)
    except ValidationError:
        return None
    if not all(answered_key(item) is not None for item in items):
        return None
    for item in items:
        if getattr(item, "id", "") is None:
            item.id = new_id(id_prefix(item.type) or "item")
        if "status" in type(item).model_fields and getattr(item, "status", "") is None:
            item.status = "completed"  # type: ignore[union-attr]
    return items


class Inbox:
    """One response's injected answers, until the agent waiting on each takes it."""

    def __init__(self) -> None:
        self.open = False
        """A client can inject into the response (it runs on a WebSocket): its agents wait for answers
        to their client calls rather than end."""
        self._received: dict[str, Item] = {}
        self._arrived = asyncio.Event()

    def deliver(self, items: Sequence[Item]) -> None:
        """Injected answers (each names what it answers: see ``answered_key``)."""
        for item in items:
            key = answered_key(item)
            if key is not None:
                self._received[key] = item
        self._arrived.set()

    async def take(self, keys: Sequence[str]) -> list[Item]:
        """The answers to ``keys``, in their order, once every one has arrived."""
        while not all(key in self._received for key in keys):
            self._arrived.clear()
            await self._arrived.wait()
        return [self._received.pop(key) for key in keys]

    async def answers(self, waiting: Sequence[Item]) -> AsyncIterator[list[Item]]:
        """The answers to the ``waiting`` items, as one batch (for the loop's cancellable wait)."""
        yield await self.take([awaited_key(item) for item in waiting])
