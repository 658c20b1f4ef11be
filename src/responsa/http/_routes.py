"""HTTP endpoints: thin handlers that parse, call the service and render."""

from __future__ import annotations

from typing import Any

import orjson
from pydantic import ValidationError
from starlette.requests import Request
from starlette.responses import Response, StreamingResponse
from starlette.routing import BaseRoute, Route

from responsa.engine import ResponseService
from responsa.protocol import CreateResponseRequest, DeletedObject, InvalidRequest
from responsa.store import Order

from ._errors import invalid_from_validation, json_response
from ._sse import sse_stream

__all__ = ["PREFIXES", "routes"]

PREFIXES = ("/v1", "", "/openai/v1")
_SSE_HEADERS = {"cache-control": "no-cache", "x-accel-buffering": "no"}


def _service(request: Request) -> ResponseService:
    service: ResponseService = request.app.state.service
    return service


async def _json_object(request: Request) -> dict[str, Any]:
    raw = await request.body()
    try:
        body = orjson.loads(raw)
    except orjson.JSONDecodeError:
        raise InvalidRequest(
            "We could not parse the JSON body of your request. The body must be valid JSON.", code="invalid_json"
        ) from None
    if not isinstance(body, dict):
        raise InvalidRequest("The request body must be a JSON object.", code="invalid_json")
    return body


async def create_response(request: Request) -> Response:
    body = await _json_object(request)
    try:
        create = CreateResponseRequest.model_validate(body)
    except ValidationError as exc:
        raise invalid_from_validation(exc) from None
    service = _service(request)
    run = await service.start(create, fault=request.headers.get("x-responsa-fault"))
    if create.stream:
        return StreamingResponse(sse_stream(service.events(run)), media_type="text/event-stream", headers=_SSE_HEADERS)
    response = await service.create(run)
    return json_response(response.model_dump(mode="json"))


async def get_response(request: Request) -> Response:
    if request.query_params.get("stream", "false").lower() == "true":
        raise InvalidRequest(
            "Streaming a stored response is not supported yet.", param="stream", code="unsupported_parameter"
        )
    response = await _service(request).get(request.path_params["response_id"])
    return json_response(response.model_dump(mode="json"))


async def delete_response(request: Request) -> Response:
    response_id = request.path_params["response_id"]
    await _service(request).delete(response_id)
    return json_response(DeletedObject(id=response_id, object="response.deleted").model_dump(mode="json"))


async def cancel_response(request: Request) -> Response:
    response = await _service(request).cancel(request.path_params["response_id"])
    return json_response(response.model_dump(mode="json"))


def _limit(request: Request) -> int:
    raw = request.query_params.get("limit", "20")
    try:
        limit = int(raw)
    except ValueError:
        limit = 0
    if not 1 <= limit <= 100:
        raise InvalidRequest(
            f"Invalid 'limit': {raw!r}. Expected an integer from 1 to 100.", param="limit", code="invalid_value"
        )
    return limit


def _order(request: Request, default: Order) -> Order:
    order = request.query_params.get("order", default)
    if order == "asc":
        return "asc"
    if order == "desc":
        return "desc"
    raise InvalidRequest(f"Invalid 'order': {order!r}. Expected 'asc' or 'desc'.", param="order", code="invalid_value")


async def list_input_items(request: Request) -> Response:
    page = await _service(request).input_items(
        request.path_params["response_id"],
        limit=_limit(request),
        order=_order(request, "desc"),
        after=request.query_params.get("after"),
        before=request.query_params.get("before"),
    )
    data = [item.model_dump(mode="json") for item in page.items]
    return json_response(
        {
            "object": "list",
            "data": data,
            "first_id": data[0].get("id") if data else None,
            "last_id": data[-1].get("id") if data else None,
            "has_more": page.has_more,
        }
    )


async def list_models(request: Request) -> Response:
    names: list[str] = request.app.state.models
    data = [{"id": name, "object": "model", "created": 0, "owned_by": "responsa"} for name in names]
    return json_response({"object": "list", "data": data})


async def health(_request: Request) -> Response:
    return json_response({"status": "ok"})


def routes() -> list[BaseRoute]:
    """Every endpoint, under ``/v1``, at the root and under ``/openai/v1``."""
    table: list[BaseRoute] = [Route("/health", health, methods=["GET"])]
    for prefix in PREFIXES:
        table += [
            Route(f"{prefix}/responses", create_response, methods=["POST"]),
            Route(f"{prefix}/responses/{{response_id}}", get_response, methods=["GET"]),
            Route(f"{prefix}/responses/{{response_id}}", delete_response, methods=["DELETE"]),
            Route(f"{prefix}/responses/{{response_id}}/cancel", cancel_response, methods=["POST"]),
            Route(f"{prefix}/responses/{{response_id}}/input_items", list_input_items, methods=["GET"]),
            Route(f"{prefix}/models", list_models, methods=["GET"]),
        ]
    return table
