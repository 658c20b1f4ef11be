"""Admission to a backend: at most ``limit`` generations at once; the next ``queue`` requests wait,
each for ``wait`` seconds at most, tenants taking turns; past that a request is refused (429 with
``retry-after``) before any byte of its answer is sent.

Background work with a later completion window (``background_options.completion_window`` ``2h`` or
``8h``) does not take the line: it waits apart (:meth:`Admission.later`), for as long as its window
allows, and gets a slot only when no request waits in the line, soonest window first (``2h`` before
``8h``; in the same window a follow-up naming a ``continuation_id`` first), then first come.

Work waiting apart never takes the slots the line's requests have needed lately: while requests took
the line within the last :data:`RESERVE_SECS`, as many slots as they held at once (and one more) stay
theirs, so a client sending requests back to back does not find its slot taken by a batch's line in
the moment between two of them (the embedded model's slots are few, and a line holds one for a whole
generation). With no request for that long, work waiting apart may take every slot (a batch runs at
the model's full width when nobody asks). Work that may be pre-empted (a batch's line, which runs
again later) gives its slot back when a request finds none free: the newest of it first, one for
each request waiting, so the first requests after a quiet spell wait for a cancel, not for a
generation to end.

Without a cap, overload is invisible and unfair: a thousand streams on two cores were all accepted,
and the last of them waited the whole run for a first byte while earlier ones were served. Without a
deadline, a request admitted to the line could still wait far longer than its client would; without
turns, one tenant's burst would fill the line and every other tenant would be refused.
"""

from __future__ import annotations

import heapq
import itertools
import time
from collections import deque
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from typing import Literal

import anyio

from responsa.protocol import RateLimited

__all__ = ["Admission"]

RETRY_AFTER_SECONDS = 1

RESERVE_SECS = 2.0
"""How long the slots the line's requests held stay theirs after the last of them came."""

REFRESH_SECS = 0.25
"""How often work waiting apart looks for a slot the reserve no longer keeps."""


@dataclass(eq=False)
class _Waiter:
    tenant: str
    outcome: Literal["waiting", "admitted", "evicted"] = "waiting"
    turn: anyio.Event = field(default_factory=anyio.Event)


@dataclass(eq=False)
class Held:
    """A slot taken by work that waited apart (see :meth:`Admission.later`)."""

    preempt: Callable[[], bool] | None = None
    """Asks the work to give the slot back early (False: it cannot, it is ending anyway)."""
    asked: bool = False


class Admission:
    """A gate with a bounded waiting line: per tenant first come first served, tenants in turn."""

    def __init__(self, limit: int, queue: int, wait: float = float("inf")) -> None:
        self.limit = limit
        self.queue = queue
        self.wait = wait
        self.active = 0
        self.apart = 0
        """Slots held by work that waited apart."""
        self.waiting = 0
        self._peak = 0
        """The most slots the line's requests held at once lately (until ``_peak_until``)."""
        self._peak_until = 0.0
        self._lines: dict[str, deque[_Waiter]] = {}
        """Each tenant's waiters, oldest first; the dict's order is the tenants' turn order."""
        self._later: list[tuple[int, int, _Waiter]] = []
        """Background work waiting apart: a heap by (rank, arrival)."""
        self._arrivals = itertools.count()
        self._preemptible: dict[Held, None] = {}
        """Slots held apart by work that may give them back, oldest first (an ordered set)."""
        self._asked = 0
        """Slots asked back that have not been given back yet."""

    async def enter(self, tenant: str = "default") -> None:
        """Take one of the ``limit`` slots, waiting in line for it if need be; :meth:`leave` gives it
        back. A pair of calls, not a context manager: a run's exit stack holds the leave, and the
        generator of an ``asynccontextmanager`` cost 2 us more a request."""
        if self.active < self.limit and not self.waiting:
            self.active += 1
            self._held_by_line()
            return
        if self.waiting >= self.queue and not self._make_room(tenant):
            raise self._refusal(f"{self.queue} waiting")
        waiter = _Waiter(tenant)
        self._lines.setdefault(tenant, deque()).append(waiter)
        self.waiting += 1
        self._preempt()
        try:
            with anyio.move_on_after(self.wait):
                await waiter.turn.wait()  # the slot is handed over by whoever leaves it (see leave)
        except BaseException:
            if waiter.outcome == "admitted":  # handed a slot while being cancelled: pass it on
                self.leave()
            elif waiter.outcome == "waiting":
                self._remove(waiter)
            raise
        if waiter.outcome == "admitted":
            self._held_by_line()
            return
        if waiter.outcome == "waiting":
            self._remove(waiter)
            raise self._refusal(f"none free within {self.wait:g}s")
        raise self._refusal("its place in line went to another tenant's request")

    def _held_by_line(self) -> None:
        """A request of the line took a slot: keep the most they held at once for ``RESERVE_SECS``."""
        now = time.monotonic()
        held = self.active - self.apart
        self._peak = held if now >= self._peak_until else max(self._peak, held)
        self._peak_until = now + RESERVE_SECS

    def _free_for_apart(self) -> bool:
        """Whether work waiting apart may take a slot now: one is free beyond the line's reserve."""
        reserved = self._peak + 1 if time.monotonic() < self._peak_until else 0
        return self.active < self.limit and not self.waiting and self.apart < self.limit - reserved

    def _preempt(self) -> None:
        """Ask the newest work holding a slot apart that may give it back to do so, until as many slots
        are asked back as requests wait in the line (each given back goes to the first of them)."""
        while self._asked < self.waiting and self._preemptible:
            held = next(reversed(self._preemptible))
            del self._preemptible[held]
            assert held.preempt is not None
            if held.preempt():
                held.asked = True
                self._asked += 1

    async def later(
        self, tenant: str, rank: int, patience: float, preempt: Callable[[], bool] | None = None
    ) -> AsyncIterator[Held]:
        """Wait apart for a slot, behind every request in the line (and the slots they held lately) and
        every background run of a lower ``rank``, for ``patience`` seconds at most (then a 429 saying
        so); yields once it holds one, which :meth:`leave_apart` gives back. An iterator so that a
        run's cancel can break the wait. With ``preempt``, a request that finds no slot free may ask
        for this one back (see :meth:`_preempt`)."""
        held = Held(preempt)
        if not self._later and self._free_for_apart():
            self.active += 1
            self.apart += 1
            self._holding(held)
            yield held
            return
        waiter = _Waiter(tenant)
        heapq.heappush(self._later, (rank, next(self._arrivals), waiter))
        deadline = time.monotonic() + patience
        try:
            while waiter.outcome == "waiting" and (left := deadline - time.monotonic()) > 0:
                with anyio.move_on_after(min(REFRESH_SECS, left)):
                    await waiter.turn.wait()
                self._fill_apart()  # the reserve may have lapsed: no leave() hands those slots on
        except BaseException:
            if waiter.outcome == "admitted":
                self.leave_apart(held)
            else:
                self._drop_later(waiter)
            raise
        if waiter.outcome != "admitted":
            self._drop_later(waiter)
            raise self._refusal(f"none free within its completion window ({patience:g}s)")
        self._holding(held)
        yield held

    def _holding(self, held: Held) -> None:
        if held.preempt is not None:
            self._preemptible[held] = None

    def _fill_apart(self) -> None:
        """Give the free slots beyond the line's reserve to the first of the work waiting apart."""
        while self._later and self._free_for_apart():
            _, _, waiter = heapq.heappop(self._later)
            self.active += 1
            self.apart += 1
            waiter.outcome = "admitted"
            waiter.turn.set()

    def _drop_later(self, waiter: _Waiter) -> None:
        """``waiter`` out of the background work waiting apart (it gave up or was cancelled)."""
        self._later = [entry for entry in self._later if entry[2] is not waiter]
        heapq.heapify(self._later)

    def leave_apart(self, held: Held) -> None:
        """:meth:`leave`, for a slot taken by work that waited apart."""
        if held.asked:
            self._asked -= 1
        self._preemptible.pop(held, None)
        self.apart -= 1
        self.leave()

    def leave(self) -> None:
        """Hand the slot to the oldest waiter of the next tenant in turn (who then goes to the back);
        with no one in the line, to the first background run waiting apart (beyond the line's reserve)."""
        for tenant, line in self._lines.items():
            waiter = line.popleft()
            self.waiting -= 1
            del self._lines[tenant]
            if line:
                self._lines[tenant] = line
            waiter.outcome = "admitted"
            waiter.turn.set()  # ``active`` stays: the slot changes hands
            return
        self.active -= 1
        self._fill_apart()

    def _make_room(self, tenant: str) -> bool:
        """A full line still takes a tenant with fewer waiters than the one holding most of it: that
        one's newest waiter is refused in its stead."""
        if not self._lines:
            return False
        biggest = max(self._lines, key=lambda name: len(self._lines[name]))
        line = self._lines[biggest]
        if len(line) <= len(self._lines.get(tenant, ())) + 1:
            return False
        evicted = line.pop()
        self.waiting -= 1
        if not line:
            del self._lines[biggest]
        evicted.outcome = "evicted"
        evicted.turn.set()
        return True

    def _remove(self, waiter: _Waiter) -> None:
        line = self._lines[waiter.tenant]
        line.remove(waiter)
        self.waiting -= 1
        if not line:
            del self._lines[waiter.tenant]

    def _refusal(self, why: str) -> RateLimited:
        return RateLimited(
            f"The server is at capacity ({self.limit} generations running; {why}). Retry in {RETRY_AFTER_SECONDS}s.",
            code="server_overloaded",
            headers={"retry-after": str(RETRY_AFTER_SECONDS)},
        )
