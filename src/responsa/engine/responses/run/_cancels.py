"""Cancels asked for in other processes (workers, replicas), acted on in the one running the response.

The store counts every cancel asked for (migration 0016), so a process looks every
:data:`CANCEL_POLL` (``--cancel-poll-secs``) with a read of one row, and searches the ids of the
responses it runs only when that count changed: a cancel from another replica lands within about
50 ms, and a process with many responses running does not search them twenty times a second
(checking every 50 ms with the search cost 10-13 us of CPU per request on the rig). Processes of one
server on one machine (``--workers``) also tell each other at once (:class:`Neighbours`), so a cancel
reaching another worker than the one running the response does not wait for that look."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Protocol

from responsa.store import Store

from ..._periodic import every
from ._run import Run

__all__ = ["CANCELLED_POLL", "CANCEL_POLL", "CancelWatch", "Neighbours"]

CANCEL_POLL = 0.05
"""Seconds between looks for cancels asked for in other processes."""

CANCELLED_POLL = 0.01
"""Seconds between reads of a response whose cancel was asked here and is acted on elsewhere, until it
ends (only while a cancel request waits for its answer)."""


class Neighbours(Protocol):
    """The other processes of this server on this machine (its workers), told of every cancel asked here
    for a response this process does not run."""

    def tell(self) -> None:
        """Tell every other one that a cancel was asked (without waiting: one that is gone is skipped)."""
        ...

    async def hear(self) -> None:
        """Return once another one has told of a cancel."""
        ...


class CancelWatch:
    """Looks for cancels of the responses running in this process (``running``) asked elsewhere, every
    ``poll`` seconds and whenever a neighbour tells of one."""

    def __init__(self, store: Store, running: Mapping[str, Run], poll: float = CANCEL_POLL) -> None:
        self._store = store
        self._running = running
        self._poll = poll
        self._neighbours: Neighbours | None = None
        self._seen: int | None = None
        """The store's count of cancels asked when this process last searched its responses."""
        self._recheck = True

    def recheck(self) -> None:
        """Search every running response at the next look, whatever the count: one was stored before it
        ran here (a background launch), so a cancel could have been asked before this process held it."""
        self._recheck = True

    def asked(self) -> None:
        """A cancel was asked here for a response another process runs: tell the neighbours."""
        if self._neighbours is not None:
            self._neighbours.tell()

    async def watch(self, neighbours: Neighbours | None = None) -> None:
        self._neighbours = neighbours
        wake = None if neighbours is None else neighbours.hear
        await every(self._poll, self._look, "checking for cancel requests", wake)

    async def _look(self) -> None:
        if not self._running:
            return
        recheck, self._recheck = self._recheck, False
        try:
            asked = await self._store.cancel_asks()
            if asked == self._seen and not recheck:
                return
            asked_here = await self._store.cancels_requested(list(self._running))
        except BaseException:
            self._recheck |= recheck  # the store did not answer: search at the next look still
            raise
        for response_id in asked_here:
            run = self._running.get(response_id)
            if run is not None:
                run.stop("cancelled")
        self._seen = asked
