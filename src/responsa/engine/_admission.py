"""Admission to a backend: at most ``limit`` generations at once, the next ``queue`` requests wait
their turn first come first served, and past that a request is refused at once (429 with
``retry-after``) instead of queueing without bound.

Without a cap, overload is invisible and unfair: a thousand streams on two cores were all accepted,
and the last of them waited the whole run for a first byte while earlier ones were served.
"""

from __future__ import annotations

from collections import deque
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import anyio

from responsa.protocol import RateLimited

__all__ = ["Admission"]

RETRY_AFTER_SECONDS = 1


class Admission:
    """A first-come-first-served gate with a bounded waiting line."""

    def __init__(self, limit: int, queue: int) -> None:
        self.limit = limit
        self.queue = queue
        self.active = 0
        self._waiting: deque[anyio.Event] = deque()

    @asynccontextmanager
    async def slot(self) -> AsyncIterator[None]:
        """Hold one of the ``limit`` slots for the block, waiting in line for it if need be."""
        await self._enter()
        try:
            yield
        finally:
            self._leave()

    async def _enter(self) -> None:
        if self.active < self.limit and not self._waiting:
            self.active += 1
            return
        if len(self._waiting) >= self.queue:
            raise RateLimited(
                f"The server is at capacity ({self.limit} generations running, {self.queue} waiting). "
                f"Retry in {RETRY_AFTER_SECONDS}s.",
                code="server_overloaded",
                headers={"retry-after": str(RETRY_AFTER_SECONDS)},
            )
        turn = anyio.Event()
        self._waiting.append(turn)
        try:
            await turn.wait()  # the slot is handed over by whoever leaves it (see _leave)
        except BaseException:
            if turn.is_set():  # handed a slot while being cancelled: pass it on
                self._leave()
            else:
                self._waiting.remove(turn)
            raise

    def _leave(self) -> None:
        if self._waiting:
            self._waiting.popleft().set()  # the slot goes to the next in line; ``active`` stays
        else:
            self.active -= 1
