"""Webhooks: a tenant's endpoints, and the deliverer that sends the outbox's events (signed, at least
once, by any process sharing the store)."""

from ._deliverer import WebhookDeliverer
from ._service import STATIC_ENDPOINT, WebhookService, delivery_body, endpoint_body

__all__ = ["STATIC_ENDPOINT", "WebhookDeliverer", "WebhookService", "delivery_body", "endpoint_body"]
