"""``/v1/vector_stores``: stores, their files, and search (OpenAI's shapes)."""

from __future__ import annotations

import time
from typing import Any

from pydantic import BaseModel
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import BaseRoute, Route

from responsa.engine import VectorStoreService, batch_body, file_body, vector_store_body
from responsa.protocol import (
    CreateFileBatchRequest,
    CreateVectorStoreFileRequest,
    CreateVectorStoreRequest,
    DeletedObject,
    InvalidRequest,
    SearchVectorStoreRequest,
    UpdateVectorStoreFileRequest,
    UpdateVectorStoreRequest,
)

from ._errors import json_response
from ._parsing import list_body, paging, read_model
from ._services import services, tenant_of

__all__ = ["vector_store_routes"]

_FILE_STATUSES = frozenset({"in_progress", "completed", "failed", "cancelled"})


def _service(request: Request) -> VectorStoreService:
    service = services(request).vector_stores
    return service.for_tenant(tenant_of(request))


def _store_id(request: Request) -> str:
    return str(request.path_params["vector_store_id"])


async def create_store(request: Request) -> Response:
    stored = await _service(request).create(await read_model(request, CreateVectorStoreRequest))
    return json_response(_wire(vector_store_body(stored, time.time())))


async def list_stores(request: Request) -> Response:
    page = paging(request, default_limit=20)
    found, more = await _service(request).page(limit=page.limit, order=page.order, after=page.after, before=page.before)
    now = time.time()
    return json_response(list_body([_wire(vector_store_body(stored, now)) for stored in found], more))


async def get_store(request: Request) -> Response:
    return json_response(_wire(vector_store_body(await _service(request).get(_store_id(request)), time.time())))


async def update_store(request: Request) -> Response:
    changes = await read_model(request, UpdateVectorStoreRequest)
    return json_response(
        _wire(vector_store_body(await _service(request).update(_store_id(request), changes), time.time()))
    )


async def delete_store(request: Request) -> Response:
    await _service(request).delete(_store_id(request))
    return json_response(DeletedObject(id=_store_id(request), object="vector_store.deleted").model_dump(mode="json"))


async def add_file(request: Request) -> Response:
    body = await read_model(request, CreateVectorStoreFileRequest)
    return json_response(_wire(file_body(await _service(request).add_file(_store_id(request), body))))


async def list_files(request: Request) -> Response:
    """The store's files, or one batch's (``…/file_batches/{batch_id}/files``)."""
    page = paging(request, default_limit=20)
    status = request.query_params.get("filter")
    if status is not None and status not in _FILE_STATUSES:
        raise InvalidRequest(f"Invalid 'filter': {status!r}.", param="filter", code="invalid_value")
    found, more = await _service(request).files(
        _store_id(request), status=status, limit=page.limit, order=page.order, after=page.after, before=page.before,
        batch_id=request.path_params.get("batch_id"),
    )  # fmt: skip
    return json_response(list_body([_wire(file_body(stored)) for stored in found], more))


async def get_file(request: Request) -> Response:
    stored = await _service(request).file(_store_id(request), request.path_params["file_id"])
    return json_response(_wire(file_body(stored)))


async def update_file(request: Request) -> Response:
    body = await read_model(request, UpdateVectorStoreFileRequest)
    stored = await _service(request).update_file(
        _store_id(request), request.path_params["file_id"], body.attributes or {}
    )
    return json_response(_wire(file_body(stored)))


async def remove_file(request: Request) -> Response:
    file_id = request.path_params["file_id"]
    await _service(request).remove_file(_store_id(request), file_id)
    return json_response(DeletedObject(id=file_id, object="vector_store.file.deleted").model_dump(mode="json"))


async def add_batch(request: Request) -> Response:
    body = await read_model(request, CreateFileBatchRequest)
    return json_response(_wire(batch_body(await _service(request).add_batch(_store_id(request), body))))


async def get_batch(request: Request) -> Response:
    return json_response(
        _wire(batch_body(await _service(request).batch(_store_id(request), request.path_params["batch_id"])))
    )


async def cancel_batch(request: Request) -> Response:
    stored = await _service(request).cancel_batch(_store_id(request), request.path_params["batch_id"])
    return json_response(_wire(batch_body(stored)))


async def search(request: Request) -> Response:
    body = await read_model(request, SearchVectorStoreRequest)
    return json_response(_wire(await _service(request).search(_store_id(request), body)))


def vector_store_routes(prefix: str) -> list[BaseRoute]:
    base = f"{prefix}/vector_stores"
    one = f"{base}/{{vector_store_id}}"
    return [
        Route(base, create_store, methods=["POST"]),
        Route(base, list_stores, methods=["GET"]),
        Route(one, get_store, methods=["GET"]),
        Route(one, update_store, methods=["POST"]),
        Route(one, delete_store, methods=["DELETE"]),
        Route(f"{one}/files", add_file, methods=["POST"]),
        Route(f"{one}/files", list_files, methods=["GET"]),
        Route(f"{one}/files/{{file_id}}", get_file, methods=["GET"]),
        Route(f"{one}/files/{{file_id}}", update_file, methods=["POST"]),
        Route(f"{one}/files/{{file_id}}", remove_file, methods=["DELETE"]),
        Route(f"{one}/search", search, methods=["POST"]),
        Route(f"{one}/file_batches", add_batch, methods=["POST"]),
        Route(f"{one}/file_batches/{{batch_id}}", get_batch, methods=["GET"]),
        Route(f"{one}/file_batches/{{batch_id}}/cancel", cancel_batch, methods=["POST"]),
        Route(f"{one}/file_batches/{{batch_id}}/files", list_files, methods=["GET"]),
    ]


def _wire(obj: BaseModel) -> dict[str, Any]:
    return obj.model_dump(mode="json")
