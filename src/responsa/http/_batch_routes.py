"""``/v1/batches``: create, retrieve, list and cancel batches (OpenAI's shapes)."""

from __future__ import annotations

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import BaseRoute, Route

from responsa.engine import BatchService
from responsa.protocol import CreateBatchRequest

from ._errors import json_response
from ._parsing import item_list_body, paging, read_model
from ._services import services, tenant_of

__all__ = ["batch_routes"]


def _service(request: Request) -> BatchService:
    return services(request).batches.for_tenant(tenant_of(request))


async def create_batch(request: Request) -> Response:
    batch = await _service(request).create(await read_model(request, CreateBatchRequest))
    return json_response(batch.model_dump(mode="json"))


async def get_batch(request: Request) -> Response:
    batch = await _service(request).get(request.path_params["batch_id"])
    return json_response(batch.model_dump(mode="json"))


async def list_batches(request: Request) -> Response:
    page = paging(request, default_limit=20)
    found, more = await _service(request).list(limit=page.limit, after=page.after)
    return json_response(item_list_body(found, more))


async def cancel_batch(request: Request) -> Response:
    batch = await _service(request).cancel(request.path_params["batch_id"])
    return json_response(batch.model_dump(mode="json"))


def batch_routes(prefix: str) -> list[BaseRoute]:
    return [
        Route(f"{prefix}/batches", create_batch, methods=["POST"]),
        Route(f"{prefix}/batches", list_batches, methods=["GET"]),
        Route(f"{prefix}/batches/{{batch_id}}", get_batch, methods=["GET"]),
        Route(f"{prefix}/batches/{{batch_id}}/cancel", cancel_batch, methods=["POST"]),
    ]
