"""Leases on unfinished responses: a process vouches for the stored responses it is running (queued,
in progress) by renewing their leases; a response whose lease ran out was left behind by a process
that died, and any process sharing the store ends it as ``failed`` (claiming it first, atomically,
so that two replicas never both end the same one).

All of a process's leases are renewed together, one statement every third of a lease, so holding
one costs a stream nothing.
"""

from __future__ import annotations

import logging
import time

import anyio

from responsa.protocol import LifecycleEvent, ResponseError, StorageUnavailable
from responsa.store import LoggedEvent, Store

from ..._periodic import every

__all__ = ["Leases"]

logger = logging.getLogger(__name__)


class Leases:
    """The leases this process holds, and the search for responses whose holder is gone."""

    def __init__(self, store: Store, length: float) -> None:
        self._store = store
        self.length = length
        self._held: set[str] = set()

    def take(self, response_id: str) -> float:
        """Hold a lease on a response about to be stored unfinished; returns its first expiry."""
        self._held.add(response_id)
        return time.time() + self.length

    def release(self, response_id: str) -> None:
        """The response's final state is stored (or it never will be by this process)."""
        self._held.discard(response_id)

    async def renew_forever(self) -> None:
        """Renew every held lease each third of a lease, for the server's lifetime."""
        while True:
            await anyio.sleep(self.length / 3)
            if self._held:
                try:
                    await self._store.renew_leases(list(self._held), time.time() + self.length)
                except StorageUnavailable as error:
                    logger.warning("renewing leases failed: %s", error.reason)
                except Exception:
                    logger.exception("renewing leases failed")

    async def recover(self) -> int:
        """Responses whose process died cannot be resumed mid-way: store them ``failed``, saying why
        (and end a background response's event log the same way). Run at start-up and periodically."""
        now = time.time()
        orphans = await self._store.orphaned(now)
        claimed = 0
        for tenant, response in orphans:
            if not await self._store.claim_orphan(response.id, now, now + self.length):
                continue  # another replica is ending it (or its holder is alive after all)
            claimed += 1
            store = self._store.scoped(tenant)
            response.status = "failed"
            response.error = ResponseError(
                code="server_restarted",
                message="The server running this response stopped before it finished; it was not resumed.",
            )
            events: list[LoggedEvent] = []
            if response.background:
                logged = await store.events_after(response.id, -1, limit=1_000_000)
                sequence = logged[-1].sequence_number + 1 if logged else 0
                failed = LifecycleEvent(type="response.failed", response=response, sequence_number=sequence)
                events.append(LoggedEvent(sequence, failed.type, failed.model_dump_json()))
            await store.save_response(response, events=events)
        if claimed:
            logger.warning("%d unfinished responses whose process stopped were marked failed", claimed)
        return claimed

    async def watch_orphans(self) -> None:
        """Look for orphaned responses once per lease, for the server's lifetime (the first look is the
        server's own, at start-up)."""
        await anyio.sleep(self.length)
        await every(self.length, self.recover, "looking for orphaned responses")
