"""The event log of a background response: kept in memory for followers in this process and
written to the store in batches, so any process can replay it after a sequence number."""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence

import anyio

from responsa.protocol import TERMINAL_STATUSES, StreamEvent
from responsa.store import LoggedEvent, Store

__all__ = ["EventLog", "replay"]


class EventLog:
    """Append-only; ``follow`` yields what is there and waits for more until ``close``."""

    def __init__(self, store: Store, response_id: str) -> None:
        self._store = store
        self._response_id = response_id
        self.events: list[LoggedEvent] = []
        self._written = 0
        self._grew = anyio.Event()
        self.closed = False
        self.drained = anyio.Event()
        """Set once the log is closed and every event is in the store."""

    def extend(self, events: Sequence[StreamEvent]) -> None:
        self.events += [LoggedEvent(event.sequence_number, event.type, event.model_dump_json()) for event in events]
        self._wake()

    def close(self) -> None:
        self.closed = True
        self._wake()

    def _wake(self) -> None:
        self._grew.set()
        self._grew = anyio.Event()

    async def write_behind(self) -> None:
        """Write new events to the store in batches until the log is closed and all are written."""
        while True:
            grew = self._grew
            batch = self.events[self._written :]
            if batch:
                await self._store.append_events(self._response_id, batch)
                self._written += len(batch)
            elif self.closed:
                self.drained.set()
                return
            else:
                await grew.wait()

    async def follow(self, after: int) -> AsyncIterator[list[LoggedEvent]]:
        """Events with a sequence number above ``after``, in batches as they come, until the log closes."""
        index = after + 1
        while True:
            grew = self._grew
            if index < len(self.events):
                batch = self.events[index:]
                index += len(batch)
                yield batch
            if self.closed:
                return
            await grew.wait()


async def replay(store: Store, response_id: str, after: int, poll: float = 0.1) -> AsyncIterator[list[LoggedEvent]]:
    """Events from the store after ``after``, in batches, polling until the response has ended and all are read.

    The log is fully written before a response is stored as ended, so one read after seeing the end
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
