"""A run's cancel: a flag the run checks, and a wait on the model that the flag breaks at once.

A cancel must land whatever the model is doing: thinking silently for a minute, or an upstream that
stalls. Checking the flag between the model's outputs waits for the next one; so while the run awaits
the model (or a call the server runs) it says so (``waiting``), and setting the flag then cancels that
await: the asyncio task is cancelled, and the cancel taken back once caught (:meth:`took_back`), so no
other cancel is swallowed. The model's stream is then closed by the run as on any end: the upstream
request is dropped, llama.cpp's decode stopped. Between awaits nothing is interrupted: the run's own
writes and events are never cut.

The model's loop does this inline (two attribute writes a batch). An anyio ``CancelScope`` per await
measured ~5 us a batch, a helper coroutine ~0.8 us and an async-generator wrapper ~1.5 us, on every
token of every stream (the simulator's JSON responses went 10-20% slower with the helper).
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import TypeVar

__all__ = ["CancelSignal"]

T = TypeVar("T")


class CancelSignal:
    def __init__(self) -> None:
        self._set = False
        self.task: asyncio.Task[object] | None = None
        """The task that awaits the model (bound by :meth:`bind`)."""
        self.waiting = False
        """The task is awaiting the model (or a server call) now: a cancel may break that await."""

    def is_set(self) -> bool:
        return self._set

    def bind(self) -> None:
        """The current task is the one that will await the model."""
        self.task = asyncio.current_task()

    def set(self) -> None:
        """Cancel: the model's current wait (if any) ends now; later ones do not start."""
        if self._set:
            return
        self._set = True
        if self.waiting and self.task is not None:
            self.task.cancel()

    def took_back(self) -> bool:
        """For a ``CancelledError`` caught while waiting: whether it was this signal's (taken back, the
        wait is simply over) rather than anyone else's (to be re-raised)."""
        return self._set and self.task is not None and self.task.uncancel() == 0

    async def next(self, events: AsyncIterator[T]) -> T | None:
        """The next of ``events`` (a server call's); None at their end, or as soon as the signal is set."""
        if self._set:
            return None
        self.bind()
        self.waiting = True
        try:
            return await events.__anext__()
        except StopAsyncIteration:
            return None
        except asyncio.CancelledError:
            if self.took_back():
                return None
            raise
        finally:
            self.waiting = False
