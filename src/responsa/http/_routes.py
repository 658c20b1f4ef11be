"""HTTP endpoints of responses: thin handlers that parse, call the service and render."""

from __future__ import annotations

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import BaseRoute, Route, WebSocketRoute

from responsa.engine import ResponseService
from responsa.engine.usage import Used
from responsa.protocol import (
    CreateEmbeddingRequest,
    CreateResponseRequest,
    DeletedObject,
    InvalidRequest,
    ModerationRequest,
)

from ._admin_routes import admin_routes
from ._batch_routes import batch_routes
from ._compaction_routes import compaction_routes
from ._console import console_routes
from ._container_routes import container_routes
from ._conversation_routes import conversation_routes
from ._errors import json_response
from ._file_routes import file_routes
from ._image_routes import image_routes
from ._model_catalog import list_models, retrieve_model
from ._openapi import openapi_route
from ._parsing import item_list_body, page_body, paging, read_model, response_filter
from ._server_routes import server_routes
from ._services import check_model, count_use, services, tenant_of
from ._skill_routes import skill_routes
from ._sse import sse_logged, sse_response, sse_stream
from ._usage_routes import usage_routes
from ._vector_store_routes import vector_store_routes
from ._webhook_routes import webhook_routes
from ._websocket import responses_socket
from .chat import chat_routes

__all__ = ["PREFIXES", "routes"]

PREFIXES = ("/v1", "", "/openai/v1", "/v3")
"""``/v3`` is OpenVINO Model Server's base URL; the others are OpenAI's, the bare one mlxcel's."""


def _service(request: Request) -> ResponseService:
    """The responses service, as the request's tenant sees it."""
    return services(request).responses.for_tenant(tenant_of(request))


def _flag(request: Request, name: str) -> bool:
    """A ``true``/``false`` query parameter (false when absent); anything else is a 400 naming it."""
    raw = request.query_params.get(name, "false").lower()
    if raw not in ("true", "false"):
        raise InvalidRequest(f"Invalid '{name}': {raw!r}. Expected true or false.", param=name, code="invalid_value")
    return raw == "true"


async def create_response(request: Request) -> Response:
    create = await read_model(request, CreateResponseRequest, services(request).limits.create_defaults)
    service = _service(request)
    run = await service.start(create, fault=request.headers.get("x-responsa-fault"))
    if create.background:
        queued = await service.launch(run)
        if create.stream:
            followed = await service.follow(queued.id, after=-1)
            return sse_response(request, sse_logged(followed, obfuscating=create.obfuscates))
        return json_response(queued.model_dump(mode="json"))
    if create.stream:
        return sse_response(request, sse_stream(service.events(run), run.event_json))
    return json_response(await service.create_json(run))


async def list_responses(request: Request) -> Response:
    """The caller's stored responses, newest first by default, with cursor paging and filters (an
    extension, as Llama Stack's; see docs/api.md)."""
    page = paging(request, default_limit=20)
    found = await _service(request).list_responses(
        response_filter(request), limit=page.limit, order=page.order, after=page.after, before=page.before
    )
    return json_response(item_list_body(found.responses, found.has_more))


async def get_response(request: Request) -> Response:
    response_id = request.path_params["response_id"]
    if _flag(request, "stream"):
        raw = request.query_params.get("starting_after", "-1")
        try:
            after = int(raw)
        except ValueError:
            raise InvalidRequest(
                f"Invalid 'starting_after': {raw!r}. Expected an integer.", param="starting_after", code="invalid_value"
            ) from None
        followed = await _service(request).follow(response_id, after)
        obfuscating = _flag(request, "include_obfuscation")
        return sse_response(request, sse_logged(followed, obfuscating=obfuscating))
    query = request.query_params
    include = query.getlist("include") + query.getlist("include[]")
    response = await _service(request).get(response_id, include or None)
    return json_response(response.model_dump(mode="json"))


async def get_timeline(request: Request) -> Response:
    """The response's timing record (an extension; see docs/api.md)."""
    timeline = await _service(request).timeline(request.path_params["response_id"])
    return json_response(timeline)


async def delete_response(request: Request) -> Response:
    response_id = request.path_params["response_id"]
    await _service(request).delete(response_id)
    return json_response(DeletedObject(id=response_id, object="response.deleted").model_dump(mode="json"))


async def cancel_response(request: Request) -> Response:
    response = await _service(request).cancel(request.path_params["response_id"])
    return json_response(response.model_dump(mode="json"))


async def list_input_items(request: Request) -> Response:
    page = paging(request, default_limit=20)
    found = await _service(request).input_items(
        request.path_params["response_id"],
        limit=page.limit,
        order=page.order,
        after=page.after,
        before=page.before,
    )
    return json_response(page_body(found))


async def list_prompts(request: Request) -> Response:
    """The reusable prompts of ``--prompts-dir`` (read at start), with their versions."""
    return json_response({"object": "list", "data": services(request).responses.prompts()})


async def create_moderation(request: Request) -> Response:
    """OpenAI's ``POST /v1/moderations``, by a moderation model this server serves."""
    asked = await read_model(request, ModerationRequest)
    await check_model(request, asked.model)
    reply = await _service(request).moderate(asked.texts(), asked.model)
    count_use(request, Used("moderations", str(reply.get("model") or asked.model or "")))  # no tokens counted
    return json_response(reply)


async def create_embeddings(request: Request) -> Response:
    """OpenAI's ``POST /v1/embeddings``, by a model that makes embeddings."""
    asked = await read_model(request, CreateEmbeddingRequest)
    await check_model(request, asked.model)
    reply = await services(request).embeddings.create(asked)
    count_use(request, Used("embeddings", asked.model, input_tokens=reply["usage"]["prompt_tokens"]))
    return json_response(reply)


async def health(request: Request) -> Response:
    """200 while the server can serve, 503 while its store cannot take writes (a full disk, a
    read-only or vanished database), saying why: a load balancer or an operator sees the truth."""
    store = await services(request).store_health()
    if store.failing is None:
        return json_response({"status": "ok", "store": store.as_json()})
    return json_response({"status": "degraded", "store": store.as_json()}, status_code=503)


async def metrics(request: Request) -> Response:
    return Response(services(request).metrics.render(), media_type="text/plain; version=0.0.4; charset=utf-8")


def routes() -> list[BaseRoute]:
    """Every endpoint under each of :data:`PREFIXES`."""
    table: list[BaseRoute] = [
        Route("/health", health, methods=["GET"]),
        Route("/metrics", metrics, methods=["GET"]),
        openapi_route(),
    ]
    for prefix in PREFIXES:
        table += [
            Route(f"{prefix}/responses", create_response, methods=["POST"]),
            Route(f"{prefix}/responses", list_responses, methods=["GET"]),
            WebSocketRoute(f"{prefix}/responses", responses_socket),
            Route(f"{prefix}/responses/{{response_id}}", get_response, methods=["GET"]),
            Route(f"{prefix}/responses/{{response_id}}", delete_response, methods=["DELETE"]),
            Route(f"{prefix}/responses/{{response_id}}/cancel", cancel_response, methods=["POST"]),
            Route(f"{prefix}/responses/{{response_id}}/input_items", list_input_items, methods=["GET"]),
            Route(f"{prefix}/responses/{{response_id}}/timeline", get_timeline, methods=["GET"]),
            Route(f"{prefix}/models", list_models, methods=["GET"]),
            Route(f"{prefix}/models/{{model:path}}", retrieve_model, methods=["GET"]),
            Route(f"{prefix}/prompts", list_prompts, methods=["GET"]),
            Route(f"{prefix}/moderations", create_moderation, methods=["POST"]),
            Route(f"{prefix}/embeddings", create_embeddings, methods=["POST"]),
            *chat_routes(prefix),
            *conversation_routes(prefix),
            *compaction_routes(prefix),
            *server_routes(prefix),
            *file_routes(prefix),
            *vector_store_routes(prefix),
            *container_routes(prefix),
            *batch_routes(prefix),
            *webhook_routes(prefix),
            *skill_routes(prefix),
            *image_routes(prefix),
        ]
    return [*table, *admin_routes(), *usage_routes(), *console_routes()]
