"""A run's cancel: a flag the run checks, and a wait on the model that the flag breaks at once.

A cancel must land whatever the model is doing: thinking silently for a minute, or an upstream that
stalls. Checking the flag between the model's outputs waits for the next one; so the run awaits the
model through :meth:`CancelSignal.next`, and setting the flag cancels that await (the asyncio task is
cancelled, and the cancel taken back once caught, so no other cancel is swallowed). The model's
stream is then closed by the run as on any end: the upstream request is dropped, llama.cpp's decode
stopped. Between awaits nothing is interrupted: the run's own writes and events are never cut.

A scope per await (anyio's ``CancelScope``) would do the same at ~5 us a batch, on every token of every
stream; this costs ~0.5 us (an async generator wrapping the stream, ~1.5 us).
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
        self._waiting: asyncio.Task[object] | None = None

    def is_set(self) -> bool:
        return self._set

    def set(self) -> None:
        """Cancel: the model's current wait (if any) ends now; later ones do not start."""
        if self._set:
            return
        self._set = True
        if self._waiting is not None:
            self._waiting.cancel()

    async def next(self, events: AsyncIterator[T]) -> T | None:
        """The model's next output; None at its end, or as soon as the signal is set."""
        if self._set:
            return None
        self._waiting = asyncio.current_task()
        try:
            return await events.__anext__()
        except StopAsyncIteration:
            return None
        except asyncio.CancelledError:
            task = self._waiting
            if self._set and task is not None and task.uncancel() == 0:
                return None  # our own cancel, and no other: the wait is over
            raise
        finally:
            self._waiting = None
