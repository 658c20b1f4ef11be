"""The deliverer: sends the outbox's due deliveries, a few at a time, each attempt recorded; a failed
one is tried again later (exponential backoff) until :data:`RETRY_DELAYS` run out, then ``failed``.
Deliveries are claimed by lease, so every process sharing the store sends them and one whose sender
stopped mid-way is sent again (at least once: a receiver deduplicates by ``webhook-id``). One
endpoint has at most :data:`PER_ENDPOINT` deliveries in flight from a process, so a slow or silent
receiver holds that many of its ``concurrency`` and the other endpoints' events go on."""

from __future__ import annotations

import logging
import time
from collections import Counter

import anyio

from responsa.external import WebhookSender
from responsa.store import DueDelivery, WebhookRepository

__all__ = ["RETRY_DELAYS", "WebhookDeliverer"]

logger = logging.getLogger(__name__)

RETRY_DELAYS = (1.0, 5.0, 30.0, 120.0, 600.0, 1800.0, 3600.0, 3 * 3600.0, 6 * 3600.0, 12 * 3600.0)
"""Seconds before each retry; after the last a delivery is ``failed`` (about a day of trying)."""

POLL = 0.5
"""Seconds between looks at the outbox."""

PER_ENDPOINT = 2
"""Deliveries one process sends to one endpoint at once."""


class WebhookDeliverer:
    def __init__(self, store: WebhookRepository, sender: WebhookSender, concurrency: int = 8) -> None:
        self._store = store
        self._sender = sender
        self._concurrency = concurrency
        self._lease = sender.timeout * 2 + 5
        """How long a claimed delivery stays this process's: past it (the process stopped), it is sent again."""
        self._sending: Counter[str] = Counter()
        """Deliveries in flight, by endpoint."""

    async def serve(self) -> None:
        """Deliver for the server's lifetime."""
        async with anyio.create_task_group() as tasks:
            while True:
                try:
                    now = time.time()
                    free = self._concurrency - self._sending.total()
                    if free:
                        due = await self._store.claim_due(now, now + self._lease, free, PER_ENDPOINT, self._sending)
                    else:
                        due = []
                    for delivery in due:
                        self._sending[delivery.delivery.endpoint_id] += 1
                        tasks.start_soon(self._deliver, delivery)
                except Exception:
                    logger.exception("looking for webhook deliveries failed")
                await anyio.sleep(POLL)

    async def _deliver(self, due: DueDelivery) -> None:
        delivery = due.delivery
        try:
            attempt = await self._sender.send(due.url, delivery.payload, delivery.id, due.secrets)
            tried = delivery.attempts + 1
            retry_at = None
            if not attempt.delivered and tried <= len(RETRY_DELAYS):
                retry_at = time.time() + RETRY_DELAYS[tried - 1]
            await self._store.record_attempt(
                delivery.id,
                delivered=attempt.delivered,
                status_code=attempt.status_code,
                error=attempt.error,
                retry_at=retry_at,
            )
        except Exception:
            logger.exception("delivering webhook %s failed", delivery.id)
        finally:
            self._sending[delivery.endpoint_id] -= 1
            if not self._sending[delivery.endpoint_id]:
                del self._sending[delivery.endpoint_id]
