"""``GET /openapi.json``: an OpenAPI 3.1 document of every route under ``/v1``, built from the app's
route table and the protocol's request models, so it cannot drift from what the server serves.

Clients and tools (schema fuzzers, code generators) read it; request bodies are the JSON Schemas
of the models the handlers validate with, every error is the OpenAI error object.
"""

from __future__ import annotations

import re
from typing import Any

from pydantic import BaseModel
from pydantic.json_schema import GenerateJsonSchema, JsonSchemaValue
from pydantic_core import core_schema
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import BaseRoute, Route

from responsa import __version__
from responsa.protocol import (
    CreateAdminKeyRequest,
    CreateContainerFileRequest,
    CreateContainerRequest,
    CreateConversationItemsRequest,
    CreateConversationRequest,
    CreateFileBatchRequest,
    CreateKeyRequest,
    CreateProjectRequest,
    CreateResponseRequest,
    CreateServiceAccountRequest,
    CreateSpendAlertRequest,
    CreateVectorStoreFileRequest,
    CreateVectorStoreRequest,
    SearchVectorStoreRequest,
    UpdateConversationRequest,
    UpdateModelPermissionsRequest,
    UpdateProjectRequest,
    UpdateServiceAccountRequest,
    UpdateSpendAlertRequest,
    UpdateSpendLimitRequest,
    UpdateVectorStoreFileRequest,
    UpdateVectorStoreRequest,
)

from ._errors import json_response

__all__ = ["openapi_route"]

PREFIX = "/v1"
"""The documented base URL; the other prefixes serve the same routes."""

_CONVERSATION = "/v1/conversations/{conversation_id}"
_VECTOR_STORE = "/v1/vector_stores/{vector_store_id}"
_PROJECT = "/v1/organization/projects/{project_id}"
_JSON_BODIES: dict[tuple[str, str], type[BaseModel]] = {
    ("POST", "/v1/responses"): CreateResponseRequest,
    ("POST", "/v1/responses/compact"): CreateResponseRequest,
    ("POST", "/v1/responses/input_tokens"): CreateResponseRequest,
    ("POST", "/v1/conversations"): CreateConversationRequest,
    ("POST", _CONVERSATION): UpdateConversationRequest,
    ("POST", f"{_CONVERSATION}/items"): CreateConversationItemsRequest,
    ("POST", "/v1/vector_stores"): CreateVectorStoreRequest,
    ("POST", _VECTOR_STORE): UpdateVectorStoreRequest,
    ("POST", f"{_VECTOR_STORE}/search"): SearchVectorStoreRequest,
    ("POST", f"{_VECTOR_STORE}/files"): CreateVectorStoreFileRequest,
    ("POST", f"{_VECTOR_STORE}/files/{{file_id}}"): UpdateVectorStoreFileRequest,
    ("POST", f"{_VECTOR_STORE}/file_batches"): CreateFileBatchRequest,
    ("POST", "/v1/containers"): CreateContainerRequest,
    ("POST", "/v1/containers/{container_id}/files"): CreateContainerFileRequest,
    ("POST", "/v1/organization/projects"): CreateProjectRequest,
    ("POST", _PROJECT): UpdateProjectRequest,
    ("POST", f"{_PROJECT}/model_permissions"): UpdateModelPermissionsRequest,
    ("POST", f"{_PROJECT}/spend_limit"): UpdateSpendLimitRequest,
    ("POST", f"{_PROJECT}/spend_alerts"): CreateSpendAlertRequest,
    ("POST", f"{_PROJECT}/spend_alerts/{{alert_id}}"): UpdateSpendAlertRequest,
    ("POST", f"{_PROJECT}/service_accounts"): CreateServiceAccountRequest,
    ("POST", f"{_PROJECT}/service_accounts/{{service_account_id}}"): UpdateServiceAccountRequest,
    ("POST", f"{_PROJECT}/service_accounts/{{service_account_id}}/api_keys"): CreateKeyRequest,
    ("POST", f"{_PROJECT}/api_keys/{{api_key_id}}"): CreateKeyRequest,
    ("POST", "/v1/organization/admin_api_keys"): CreateAdminKeyRequest,
}
"""The model each JSON body is validated with (a POST not listed takes no body, or one of its own below)."""

_CHAT_COMPLETION = {
    "type": "object",
    "required": ["model", "messages"],
    "properties": {
        "model": {"type": "string"},
        "messages": {"type": "array", "items": {"type": "object"}},
        "stream": {"type": "boolean"},
    },
}
_UPLOAD = {
    "type": "object",
    "required": ["file", "purpose"],
    "properties": {"file": {"type": "string", "format": "binary"}, "purpose": {"type": "string"}},
}
_OTHER_BODIES: dict[tuple[str, str], dict[str, Any]] = {
    ("POST", "/v1/chat/completions"): {"application/json": {"schema": _CHAT_COMPLETION}},
    ("POST", "/v1/files"): {"multipart/form-data": {"schema": _UPLOAD}},
}

_PAGING: list[dict[str, Any]] = [
    {"name": "limit", "in": "query", "schema": {"type": "integer", "minimum": 1, "maximum": 100}},
    {"name": "order", "in": "query", "schema": {"type": "string", "enum": ["asc", "desc"]}},
    {"name": "after", "in": "query", "schema": {"type": "string"}},
]
_UNPAGED_LISTS = frozenset({"list_models"})

_ERROR = {
    "type": "object",
    "required": ["error"],
    "properties": {
        "error": {
            "type": "object",
            "required": ["message", "type", "param", "code"],
            "properties": {
                "message": {"type": "string"},
                "type": {"type": "string"},
                "param": {"type": ["string", "null"]},
                "code": {"type": ["string", "null"]},
            },
        }
    },
}


def openapi_document(routes: list[BaseRoute]) -> dict[str, Any]:
    """The document for the ``/v1`` routes in ``routes`` (and ``/health``)."""
    schemas: dict[str, Any] = {"Error": _ERROR}
    paths: dict[str, dict[str, Any]] = {}
    for route in routes:
        if not isinstance(route, Route) or not (route.path.startswith(PREFIX + "/") or route.path == "/health"):
            continue
        for method in sorted((route.methods or set()) - {"HEAD"}):
            paths.setdefault(_path(route), {})[method.lower()] = _operation(route, method, schemas)
    return {
        "openapi": "3.1.0",
        "info": {"title": "responsa", "version": __version__,
                 "description": "The OpenAI Responses API and the Open Responses specification, for any model."},
        "servers": [{"url": "/"}],
        "paths": paths,
        "components": {
            "schemas": schemas,
            "securitySchemes": {"bearer": {"type": "http", "scheme": "bearer"}},
        },
        "security": [{}, {"bearer": []}],
    }  # fmt: skip


def _path(route: Route) -> str:
    """The route's path as OpenAPI writes it: ``{name}``, without Starlette's convertor (``{name:path}``)."""
    return _CONVERTOR.sub(r"{\1}", route.path)


_CONVERTOR = re.compile(r"\{(\w+):\w+\}")


def _operation(route: Route, method: str, schemas: dict[str, Any]) -> dict[str, Any]:
    name = getattr(route.endpoint, "__name__", "endpoint")
    parameters: list[dict[str, Any]] = [
        {"name": param, "in": "path", "required": True, "schema": {"type": "string"}}
        for param in route.param_convertors
    ]
    if method == "GET" and name.startswith("list_") and name not in _UNPAGED_LISTS:
        parameters += _PAGING
    words = _path(route).strip("/").replace("/", "_").replace("{", "").replace("}", "")
    operation: dict[str, Any] = {
        "operationId": f"{method.lower()}_{words}",
        "summary": (route.endpoint.__doc__ or name.replace("_", " ")).strip().split("\n")[0],
        "parameters": parameters,
        "responses": {
            "200": {"description": "Success"},
            "default": {
                "description": "An error",
                "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}},
            },
        },
    }
    key = (method, route.path)
    if key in _JSON_BODIES:
        content = {"application/json": {"schema": _schema(_JSON_BODIES[key], schemas)}}
        operation["requestBody"] = {"required": True, "content": content}
    elif key in _OTHER_BODIES:
        operation["requestBody"] = {"required": True, "content": _OTHER_BODIES[key]}
    return operation


class _ChosenUnions(GenerateJsonSchema):
    """Pydantic's JSON Schema, but a union the server chooses among by a rule of its own (an item's
    ``type``, a dict with a ``role`` and no type being a message, any other type an ``UnknownItem``) is
    ``anyOf``: its members overlap (``type`` has a default in each, ``UnknownItem`` takes any type),
    so the ``oneOf`` pydantic writes for it, which says a value matches exactly one, refused a typed
    message (it matched ``Message`` and ``UnknownItem``): a schema fuzzer found no body at all for
    ``POST /v1/conversations/{id}/items``."""

    def tagged_union_schema(self, schema: core_schema.TaggedUnionSchema) -> JsonSchemaValue:
        found = super().tagged_union_schema(schema)
        if "discriminator" not in found:  # no property names the member: the rule is the server's
            found["anyOf"] = found.pop("oneOf")
        return found


def _schema(model: type[BaseModel], schemas: dict[str, Any]) -> dict[str, Any]:
    """A ``$ref`` to ``model``'s schema, added to ``schemas`` with the models it refers to."""
    found = model.model_json_schema(ref_template="#/components/schemas/{model}", schema_generator=_ChosenUnions)
    schemas.update(found.pop("$defs", {}))
    schemas[model.__name__] = found
    return {"$ref": f"#/components/schemas/{model.__name__}"}


async def _openapi(request: Request) -> Response:
    state = request.app.state
    document = getattr(state, "openapi", None)
    if document is None:
        document = state.openapi = openapi_document(request.app.routes)
    return json_response(document)


def openapi_route() -> Route:
    """``GET /openapi.json`` (open, like ``/health``: it describes the API, it serves none of it)."""
    return Route("/openapi.json", _openapi, methods=["GET"])
