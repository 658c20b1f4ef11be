"""``POST /chat/completions``: Chat Completions on every backend, through the same engine as responses."""

from __future__ import annotations

from pydantic import ValidationError
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import BaseRoute, Route

from .._errors import invalid_from_validation, json_response
from .._parsing import read_json
from .._services import services, tenant_of
from .._sse import sse_response
from ._stream import ChatChunker, chat_sse
from ._translate import chat_request, completion

__all__ = ["chat_routes"]


async def chat_completions(request: Request) -> Response:
    body = await read_json(request)
    try:
        create = chat_request(body)
    except ValidationError as exc:
        raise invalid_from_validation(exc) from None
    service = services(request).responses.for_tenant(tenant_of(request))
    run = await service.start(create, fault=request.headers.get("x-responsa-fault"))
    logprobs = bool(body.get("logprobs"))
    if create.stream:
        options = body.get("stream_options")
        include_usage = isinstance(options, dict) and bool(options.get("include_usage"))
        chunks = chat_sse(service.events(run), ChatChunker(include_usage, logprobs))
        return sse_response(request, chunks)
    response = await service.create(run)
    return json_response(completion(response, logprobs))


def chat_routes(prefix: str) -> list[BaseRoute]:
    return [Route(f"{prefix}/chat/completions", chat_completions, methods=["POST"])]
