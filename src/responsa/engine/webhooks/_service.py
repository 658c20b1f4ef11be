"""The webhook endpoints service: create (the secret shown once), list, get, update, delete, rotate the
secret, send a test event; and each endpoint's delivery log (an extension)."""

from __future__ import annotations

import time
from typing import Any

from responsa.external import WebhookSender, new_secret
from responsa.protocol import (
    WEBHOOK_EVENT_TYPES,
    CreateWebhookEndpointRequest,
    InvalidRequest,
    NotFound,
    UpdateWebhookEndpointRequest,
    new_id,
)
from responsa.store import Delivery, Order, WebhookEndpointRow, WebhookRepository, event_payload, secrets_of

from .._tenant_views import tenant_view

__all__ = ["STATIC_ENDPOINT", "WebhookService", "delivery_body", "endpoint_body"]

STATIC_ENDPOINT = "whep_static"
"""The id of the endpoint ``--webhook-url`` names."""

OLD_SECRET_DAYS = 24 * 3600.0

_SAMPLE_IDS = {"batch": "batch_test", "response": "resp_test", "project": "spend_alert_test"}


def _not_found(endpoint_id: str) -> NotFound:
    return NotFound(f"No webhook endpoint found with id '{endpoint_id}'.", param="webhook_endpoint_id")


def _checked_types(event_types: list[str]) -> list[str]:
    for event_type in event_types:
        if event_type not in WEBHOOK_EVENT_TYPES:
            raise InvalidRequest(
                f"Invalid event type {event_type!r}; this server sends {', '.join(WEBHOOK_EVENT_TYPES)}.",
                param="event_types",
                code="invalid_value",
            )
    return list(dict.fromkeys(event_types))


def endpoint_body(endpoint: WebhookEndpointRow, with_secret: bool = False) -> dict[str, Any]:
    """The endpoint as OpenAI shows it; its secret only when just made (creation, rotation)."""
    body: dict[str, Any] = {
        "id": endpoint.id,
        "object": "webhook_endpoint",
        "name": endpoint.name,
        "url": endpoint.url,
        "event_types": endpoint.event_types,
        "created_at": endpoint.created_at,
        "updated_at": endpoint.updated_at,
        "signing_secret_hint": f"whsec_...{endpoint.secret[-4:]}",
    }
    if with_secret:
        body["signing_secret"] = endpoint.secret
    return body


def delivery_body(delivery: Delivery) -> dict[str, Any]:
    """A delivery as the log shows it."""
    return {
        "id": delivery.id,
        "object": "webhook_delivery",
        "webhook_endpoint_id": delivery.endpoint_id,
        "event_type": delivery.event_type,
        "status": delivery.state,
        "attempts": delivery.attempts,
        "next_attempt_at": delivery.next_attempt_at if delivery.state == "pending" else None,
        "last_status_code": delivery.last_status_code,
        "last_error": delivery.last_error,
        "created_at": int(delivery.created_at),
        "delivered_at": None if delivery.delivered_at is None else int(delivery.delivered_at),
    }


class WebhookService:
    def __init__(self, store: WebhookRepository, sender: WebhookSender) -> None:
        self._store = store
        self._sender = sender
        self._views: dict[str, WebhookService] = {}

    def for_tenant(self, tenant: str) -> WebhookService:
        return tenant_view(self._views, tenant, self._view)

    def _view(self, tenant: str) -> WebhookService:
        return WebhookService(self._store.scoped(tenant), self._sender)

    async def create(self, request: CreateWebhookEndpointRequest) -> WebhookEndpointRow:
        self._sender.check(request.url, "url")
        now = int(time.time())
        endpoint = WebhookEndpointRow(
            new_id("whep"), request.name, request.url, _checked_types(request.event_types), new_secret(), now, now
        )
        await self._store.create_endpoint(endpoint)
        return endpoint

    async def put_static(self, url: str, secret: str) -> None:
        """The endpoint of ``--webhook-url`` (every event type), as the command line says now."""
        self._sender.check(url, "--webhook-url")
        now = int(time.time())
        static = WebhookEndpointRow(STATIC_ENDPOINT, "--webhook-url", url, list(WEBHOOK_EVENT_TYPES), secret, now, now)
        await self._store.put_endpoint(static)

    async def get(self, endpoint_id: str) -> WebhookEndpointRow:
        endpoint = await self._store.get_endpoint(endpoint_id)
        if endpoint is None:
            raise _not_found(endpoint_id)
        return endpoint

    async def page(self, *, limit: int, after: str | None) -> tuple[list[WebhookEndpointRow], bool]:
        return await self._store.list_endpoints(limit=limit, after=after)

    async def update(self, endpoint_id: str, changes: UpdateWebhookEndpointRequest) -> WebhookEndpointRow:
        endpoint = await self.get(endpoint_id)
        before = (endpoint.name, endpoint.url, endpoint.event_types)
        if changes.url is not None:
            self._sender.check(changes.url, "url")
            endpoint.url = changes.url
        if changes.name is not None:
            endpoint.name = changes.name
        if changes.event_types is not None:
            endpoint.event_types = _checked_types(changes.event_types)
        if (endpoint.name, endpoint.url, endpoint.event_types) != before:  # unchanged updates keep updated_at
            endpoint.updated_at = int(time.time())
            if not await self._store.update_endpoint(endpoint):
                raise _not_found(endpoint_id)
        return endpoint

    async def delete(self, endpoint_id: str) -> None:
        if not await self._store.delete_endpoint(endpoint_id):
            raise _not_found(endpoint_id)

    async def rotate_secret(self, endpoint_id: str, keep_old: bool) -> WebhookEndpointRow:
        """A new secret; with ``keep_old`` deliveries are signed with both for a day."""
        endpoint = await self.get(endpoint_id)
        now = time.time()
        endpoint.old_secret, endpoint.old_secret_until = (
            (endpoint.secret, now + OLD_SECRET_DAYS) if keep_old else (None, None)
        )
        endpoint.secret, endpoint.updated_at = new_secret(), int(now)
        if not await self._store.update_endpoint(endpoint):
            raise _not_found(endpoint_id)
        return endpoint

    async def test(self, endpoint_id: str, event_type: str) -> dict[str, Any]:
        """Send a sample event of ``event_type`` now and say what the receiver answered."""
        endpoint = await self.get(endpoint_id)
        if event_type not in WEBHOOK_EVENT_TYPES:
            raise InvalidRequest(f"Invalid 'event_type': {event_type!r}.", param="event_type", code="invalid_value")
        payload = event_payload(event_type, _SAMPLE_IDS[event_type.partition(".")[0]], int(time.time()))
        attempt = await self._sender.send(endpoint.url, payload, new_id("wh"), secrets_of(endpoint, time.time()))
        if attempt.status_code is None:
            raise InvalidRequest(
                f"The test event could not be delivered: {attempt.error}",
                param="webhook_endpoint_id",
                code="webhook_unreachable",
            )
        return {
            "object": "webhook_endpoint.test",
            "webhook_endpoint_id": endpoint.id,
            "event_type": event_type,
            "status_code": attempt.status_code,
            "success": True,
        }

    async def deliveries(
        self, endpoint_id: str, *, limit: int, order: Order, after: str | None
    ) -> tuple[list[Delivery], bool]:
        await self.get(endpoint_id)
        return await self._store.deliveries(endpoint_id, limit=limit, order=order, after=after)
