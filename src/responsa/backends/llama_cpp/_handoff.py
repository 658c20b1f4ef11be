"""What the inference thread hands to the event loop, one job's messages in order.

An anyio memory stream did this before, and was most of the event loop's work per token: its
``receive`` yields to the loop once before looking (a loop turn a token), and each wait makes an
anyio event, which asks sniffio which library runs. While the model decodes on every core, that
work is taken from the decoding: the loop spent 365 µs of CPU a token with it, ~260 without, for
~6.5 ms tokens (``bench/embedded_speed.py``).
"""

from __future__ import annotations

import asyncio
import threading
from collections import deque
from typing import Generic, TypeVar

__all__ = ["Handoff"]

T = TypeVar("T")


class Handoff(Generic[T]):
    """Messages put by one thread, taken in order by one task of ``loop``. Once the taker has gone
    (:meth:`close`), a put sets ``abandoned``: the producer stops."""

    def __init__(self, loop: asyncio.AbstractEventLoop, abandoned: threading.Event) -> None:
        self._loop = loop
        self._abandoned = abandoned
        self._messages: deque[T] = deque()
        self._waiter: asyncio.Future[None] | None = None
        self._closed = False

    def put(self, message: T) -> None:
        """From the producing thread: ``message`` goes to the loop, without waiting for it."""
        try:
            self._loop.call_soon_threadsafe(self._arrive, message)
        except RuntimeError:  # the loop is gone
            self._abandoned.set()

    def _arrive(self, message: T) -> None:
        if self._closed:
            self._abandoned.set()  # nobody is listening any more
            return
        self._messages.append(message)
        waiter = self._waiter
        if waiter is not None and not waiter.done():
            waiter.set_result(None)

    async def get(self) -> T:
        """The next message, waiting for it if none has come."""
        while not self._messages:
            self._waiter = waiter = self._loop.create_future()
            try:
                await waiter
            finally:
                self._waiter = None
        return self._messages.popleft()

    def get_nowait(self) -> T | None:
        """The next message if one has come, else None."""
        return self._messages.popleft() if self._messages else None

    def close(self) -> None:
        """The taker has gone: what comes later tells the producer to stop."""
        self._closed = True
        self._messages.clear()
