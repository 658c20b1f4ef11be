"""The webhook repository: a tenant's endpoints, and the outbox of deliveries that processes share by
lease (an event's deliveries are written in the transaction that makes the event true)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Protocol

import orjson

from responsa.protocol import new_id

from ._base import Order

__all__ = ["Delivery", "DueDelivery", "WebhookEndpointRow", "WebhookRepository", "event_payload", "secrets_of"]


@dataclass
class WebhookEndpointRow:
    id: str
    name: str
    url: str
    event_types: list[str]
    secret: str
    created_at: int
    updated_at: int
    old_secret: str | None = None
    old_secret_until: float | None = None


@dataclass(frozen=True)
class Delivery:
    """One event for one endpoint, as the delivery log shows it."""

    id: str
    endpoint_id: str
    event_type: str
    payload: str
    state: str
    attempts: int
    next_attempt_at: float
    last_status_code: int | None
    last_error: str | None
    created_at: float
    delivered_at: float | None


@dataclass(frozen=True)
class DueDelivery:
    """A delivery held by this process, with where it goes and what signs it."""

    delivery: Delivery
    url: str
    secrets: tuple[str, ...]


class WebhookRepository(Protocol):
    tenant: str

    def scoped(self, tenant: str) -> WebhookRepository: ...

    async def create_endpoint(self, endpoint: WebhookEndpointRow) -> None: ...

    async def put_endpoint(self, endpoint: WebhookEndpointRow) -> None:
        """Create or replace (the static endpoint of the command line, at each start)."""

    async def get_endpoint(self, endpoint_id: str) -> WebhookEndpointRow | None: ...

    async def list_endpoints(self, *, limit: int, after: str | None) -> tuple[list[WebhookEndpointRow], bool]: ...

    async def update_endpoint(self, endpoint: WebhookEndpointRow) -> bool: ...

    async def delete_endpoint(self, endpoint_id: str) -> bool:
        """The endpoint and its undelivered deliveries."""

    async def enqueue(self, endpoint_id: str, event_type: str, payload: str, delivery_id: str) -> None:
        """A delivery of one event to one endpoint (a test's)."""

    async def claim_due(
        self, now: float, until: float, limit: int, per_endpoint: int, sending: Mapping[str, int]
    ) -> list[DueDelivery]:
        """Deliveries due now, of every tenant, held until ``until``: the oldest of each endpoint, at most
        ``per_endpoint`` in flight to one (``sending`` counts those already in flight)."""

    async def record_attempt(
        self, delivery_id: str, *, delivered: bool, status_code: int | None, error: str | None, retry_at: float | None
    ) -> None:
        """The outcome of one attempt: delivered, to be tried again at ``retry_at``, or given up (None)."""

    async def deliveries(
        self, endpoint_id: str, *, limit: int, order: Order, after: str | None
    ) -> tuple[list[Delivery], bool]: ...

    async def delivery(self, delivery_id: str) -> Delivery | None: ...


def secrets_of(endpoint: WebhookEndpointRow, now: float) -> tuple[str, ...]:
    """The secrets a delivery is signed with now: the current one, and the old one for its last day."""
    if endpoint.old_secret and (endpoint.old_secret_until or 0) > now:
        return (endpoint.secret, endpoint.old_secret)
    return (endpoint.secret,)


def event_payload(event_type: str, object_id: str, created_at: int) -> str:
    """The event as OpenAI sends it: ``{id, object: "event", type, created_at, data: {id}}``."""
    event = {
        "id": new_id("evt"),
        "object": "event",
        "type": event_type,
        "created_at": created_at,
        "data": {"id": object_id},
    }
    return orjson.dumps(event).decode()
