"""``/v1/webhook_endpoints`` (OpenAI's shapes) and ``GET /v1/webhook_event_types``; each endpoint's
delivery log at ``/v1/webhook_endpoints/{id}/deliveries`` (an extension)."""

from __future__ import annotations

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import BaseRoute, Route

from responsa.engine import WebhookService, delivery_body, endpoint_body
from responsa.protocol import (
    WEBHOOK_EVENT_TYPES,
    CreateWebhookEndpointRequest,
    RotateSecretRequest,
    TestWebhookRequest,
    UpdateWebhookEndpointRequest,
)

from ._errors import json_response
from ._parsing import list_body, paging, read_model
from ._services import services, tenant_of

__all__ = ["webhook_routes"]


def _service(request: Request) -> WebhookService:
    return services(request).webhooks.for_tenant(tenant_of(request))


def _endpoint_id(request: Request) -> str:
    return str(request.path_params["webhook_endpoint_id"])


async def create_endpoint(request: Request) -> Response:
    endpoint = await _service(request).create(await read_model(request, CreateWebhookEndpointRequest))
    return json_response(endpoint_body(endpoint, with_secret=True))


async def list_endpoints(request: Request) -> Response:
    page = paging(request, default_limit=20)
    found, more = await _service(request).page(limit=page.limit, after=page.after)
    return json_response(list_body([endpoint_body(endpoint) for endpoint in found], more))


async def get_endpoint(request: Request) -> Response:
    return json_response(endpoint_body(await _service(request).get(_endpoint_id(request))))


async def update_endpoint(request: Request) -> Response:
    changes = await read_model(request, UpdateWebhookEndpointRequest)
    return json_response(endpoint_body(await _service(request).update(_endpoint_id(request), changes)))


async def delete_endpoint(request: Request) -> Response:
    await _service(request).delete(_endpoint_id(request))
    return json_response({"id": _endpoint_id(request), "object": "webhook_endpoint.deleted", "deleted": True})


async def rotate_secret(request: Request) -> Response:
    asked = await read_model(request, RotateSecretRequest)
    endpoint = await _service(request).rotate_secret(_endpoint_id(request), asked.keep_old_secret_active_for_24_hours)
    return json_response(endpoint_body(endpoint, with_secret=True))


async def test_endpoint(request: Request) -> Response:
    asked = await read_model(request, TestWebhookRequest)
    return json_response(await _service(request).test(_endpoint_id(request), asked.event_type))


async def list_deliveries(request: Request) -> Response:
    page = paging(request, default_limit=20)
    found, more = await _service(request).deliveries(
        _endpoint_id(request), limit=page.limit, order=page.order, after=page.after
    )
    return json_response(list_body([delivery_body(delivery) for delivery in found], more))


async def event_types(request: Request) -> Response:
    return json_response({"object": "list", "data": list(WEBHOOK_EVENT_TYPES)})


def webhook_routes(prefix: str) -> list[BaseRoute]:
    one = f"{prefix}/webhook_endpoints/{{webhook_endpoint_id}}"
    return [
        Route(f"{prefix}/webhook_endpoints", create_endpoint, methods=["POST"]),
        Route(f"{prefix}/webhook_endpoints", list_endpoints, methods=["GET"]),
        Route(one, get_endpoint, methods=["GET"]),
        Route(one, update_endpoint, methods=["POST"]),
        Route(one, delete_endpoint, methods=["DELETE"]),
        Route(f"{one}/rotate_secret", rotate_secret, methods=["POST"]),
        Route(f"{one}/test", test_endpoint, methods=["POST"]),
        Route(f"{one}/deliveries", list_deliveries, methods=["GET"]),
        Route(f"{prefix}/webhook_event_types", event_types, methods=["GET"]),
    ]
