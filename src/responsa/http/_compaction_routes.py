"""``POST /responses/compact`` and ``POST /responses/input_tokens``: the context services' endpoints."""

from __future__ import annotations

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import BaseRoute, Route

from responsa.engine import Compactor
from responsa.protocol import CreateResponseRequest, InputTokensObject

from ._errors import json_response
from ._parsing import read_model
from ._services import services, tenant_of

__all__ = ["compaction_routes"]


def _compactor(request: Request) -> Compactor:
    compactor = services(request).compactor.for_tenant(tenant_of(request))
    return compactor


async def compact(request: Request) -> Response:
    body = await read_model(request, CreateResponseRequest, services(request).limits.create_defaults)
    compacted = await _compactor(request).compact(body)
    return json_response(compacted.model_dump(mode="json"))


async def input_tokens(request: Request) -> Response:
    """``model`` may be left out (the SDK allows it): the server's first model counts then."""
    models = services(request).models
    defaults = {**(services(request).limits.create_defaults or {}), **({"model": models[0]} if models else {})}
    body = await read_model(request, CreateResponseRequest, defaults)
    count = await services(request).responses.for_tenant(tenant_of(request)).input_tokens(body)
    return json_response(InputTokensObject(input_tokens=count).model_dump(mode="json"))


def compaction_routes(prefix: str) -> list[BaseRoute]:
    return [
        Route(f"{prefix}/responses/compact", compact, methods=["POST"]),
        Route(f"{prefix}/responses/input_tokens", input_tokens, methods=["POST"]),
    ]
