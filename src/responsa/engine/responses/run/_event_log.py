"""The event log of a background response: kept in memory for followers in this process and
written to the store in batches, so any process can replay it after a sequence number.

A follower never sees a response end before the end is durable: the terminal event is stored in
the same transaction as the response's final state (``tail``), and followers here get it, and the
end of the stream, only once that is committed (``settle``).
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence

import anyio

from responsa.protocol import (
    TERMINAL_EVENT_TYPES,
    TERMINAL_STATUSES,
    EventJson,
    StorageUnavailable,
    StreamEvent,
    event_json,
)
from responsa.store import LoggedEvent, Store

__all__ = ["EventLog", "replay"]

STORAGE_RETRY_SECONDS = 0.5
"""How long the log waits before writing again after the store refused a write."""


class EventLog:
    """Append-only; ``follow`` yields what is there and waits for more until ``end``.

    Life cycle: ``extend`` (repeatedly) → ``close`` (no more events; ``drained`` once all but the ``tail`` are
    in the store) → ``settle`` (the final state and the tail are committed) → ``end`` (followers stop).
    """

    def __init__(self, store: Store, response_id: str, encode: EventJson = event_json) -> None:
        self._store = store
        self._encode = encode
        """An event as JSON (the run's own encoder: it encoded some ahead)."""
        self._response_id = response_id
        self.events: list[LoggedEvent] = []
        self._written = 0
        self._grew = anyio.Event()
        self._terminal: int | None = None
        """Index of the terminal event, withheld from followers until ``settle``."""
        self._settled = False
        self._ended = False
        self.closed = False
        self.drained = anyio.Event()
        """Set once the log is closed and every event is in the store."""

    def extend(self, events: Sequence[StreamEvent]) -> None:
        for event in events:
            if event.type in TERMINAL_EVENT_TYPES and self._terminal is None:
                self._terminal = len(self.events)
            self.events.append(LoggedEvent(event.sequence_number, event.type, self._encode(event).decode()))
        self._wake()

    def close(self) -> None:
        self.closed = True
        self._wake()

    def settle(self) -> None:
        """The response's final state is committed: followers may see it end."""
        self._settled = True
        self._wake()

    def end(self) -> None:
        """Followers stop after what they may see (without ``settle``, not the terminal event)."""
        self._ended = True
        self._wake()

    def _wake(self) -> None:
        self._grew.set()
        self._grew = anyio.Event()

    def _tail_start(self) -> int:
        """Where the tail (the terminal event onwards) begins; the end of the log while there is none."""
        return len(self.events) if self._terminal is None else self._terminal

    def _visible(self) -> int:
        return len(self.events) if self._settled else self._tail_start()

    def tail(self) -> list[LoggedEvent]:
        """The terminal event onwards: written with the final state, not by ``write_behind``."""
        return self.events[self._tail_start() :]

    async def write_behind(self) -> None:
        """Write new events to the store in batches until the log is closed and all before the tail are written."""
        while True:
            grew = self._grew
            batch = self.events[self._written : self._tail_start()]
            if batch:
                try:
                    await self._store.append_events(self._response_id, batch)
                except StorageUnavailable:  # the store is failing (a full disk...): try again shortly
                    await anyio.sleep(STORAGE_RETRY_SECONDS)
                    continue
                self._written += len(batch)
            elif self.closed:
                self.drained.set()
                return
            else:
                await grew.wait()

    async def follow(self, after: int) -> AsyncIterator[list[LoggedEvent]]:
        """Events with a sequence number above ``after``, in batches as they come, until the log ends."""
        index = after + 1
        while True:
            grew = self._grew
            visible = self._visible()
            if index < visible:
                batch = self.events[index:visible]
                index = visible
                yield batch
            if self._ended:
                return
            await grew.wait()


async def replay(store: Store, response_id: str, after: int, poll: float = 0.1) -> AsyncIterator[list[LoggedEvent]]:
    """Events from the store after ``after``, in batches, polling until the response has ended and all are read.

    The log is fully written when a response is stored as ended, so one read after seeing the end
    finds the rest.
    """
    position = after
    while True:
        response = await store.get_response(response_id)
        ended = response is None or response.status in TERMINAL_STATUSES
        batch = await store.events_after(response_id, position)
        if batch:
            yield batch
            position = batch[-1].sequence_number
        if ended and not batch:
            return
        if not batch:
            await anyio.sleep(poll)
