"""``/v1/files``: multipart uploads streamed into the store, listing, metadata, content and deletion."""

from __future__ import annotations

import re
from collections.abc import AsyncIterator
from urllib.parse import quote

from starlette.datastructures import UploadFile
from starlette.requests import Request
from starlette.responses import Response, StreamingResponse
from starlette.routing import BaseRoute, Route
from starlette.types import Message

from responsa.engine import FileService
from responsa.protocol import DeletedObject, InvalidRequest, PayloadTooLarge

from ._errors import json_response
from ._parsing import item_list_body, paging
from ._services import services, tenant_of

__all__ = ["FORM_SLACK", "counting", "file_routes", "is_upload", "upload_chunks"]

_READ_BYTES = 256 * 1024
FORM_SLACK = 64 * 1024
"""Room for the multipart envelope and the other fields around the file's bytes."""


_UPLOAD_PATHS = frozenset(("/v1/files", "/files", "/openai/v1/files", "/v3/files"))
_CONTAINER_UPLOAD = re.compile(r"^(?:/v1|/openai/v1|/v3)?/containers/[^/]+/files$")


def is_upload(method: str, path: str) -> bool:
    """``POST …/files`` (and a container's): its body is limited by ``--max-file-bytes``, not by the JSON
    body limit."""
    return method == "POST" and (path in _UPLOAD_PATHS or _CONTAINER_UPLOAD.match(path) is not None)


def _files(request: Request) -> FileService:
    service = services(request).files
    return service.for_tenant(tenant_of(request))


def counting(request: Request, limit: int) -> Request:
    """The request, its body refused with a 413 as soon as it passes ``limit`` (with or without a
    content-length): an upload is never read whole before it is refused."""
    seen = 0
    receive = request.receive

    async def counted() -> Message:
        nonlocal seen
        message = await receive()
        seen += len(message.get("body", b""))
        if seen > limit:
            raise PayloadTooLarge(f"The file is larger than this server's limit of {limit - FORM_SLACK} bytes.")
        return message

    return Request(request.scope, counted)


async def upload_chunks(upload: UploadFile) -> AsyncIterator[bytes]:
    while chunk := await upload.read(_READ_BYTES):
        yield chunk


def _expiry(form_value: object, anchor: object) -> int | None:
    if form_value is None:
        return None
    if anchor not in (None, "created_at"):
        raise InvalidRequest(
            "'expires_after[anchor]' must be 'created_at'.", param="expires_after[anchor]", code="invalid_value"
        )
    if not isinstance(form_value, str) or not form_value.isdigit():
        raise InvalidRequest(
            "'expires_after[seconds]' must be an integer.", param="expires_after[seconds]", code="invalid_value"
        )
    return int(form_value)


async def upload_file(request: Request) -> Response:
    service = _files(request)
    counted = counting(request, service.max_bytes + FORM_SLACK)
    async with counted.form(max_files=1, max_fields=8) as form:
        upload, purpose = form.get("file"), form.get("purpose")
        if not isinstance(upload, UploadFile):
            raise InvalidRequest("Missing required parameter: 'file'.", param="file", code="missing_required_parameter")
        if not isinstance(purpose, str) or not purpose:
            raise InvalidRequest(
                "Missing required parameter: 'purpose'.", param="purpose", code="missing_required_parameter"
            )
        expires = _expiry(form.get("expires_after[seconds]"), form.get("expires_after[anchor]"))
        file = await service.upload(upload.filename or "upload", purpose, upload_chunks(upload), expires)
    return json_response(file.model_dump(mode="json"))


async def list_files(request: Request) -> Response:
    page = paging(request, default_limit=10000, max_limit=10000)
    found, has_more = await _files(request).list(
        purpose=request.query_params.get("purpose"), limit=page.limit, order=page.order, after=page.after
    )
    return json_response(item_list_body(found, has_more))


async def get_file(request: Request) -> Response:
    file = await _files(request).get(request.path_params["file_id"])
    return json_response(file.model_dump(mode="json"))


async def file_content(request: Request) -> Response:
    file, parts = await _files(request).content(request.path_params["file_id"])
    headers = {
        "content-length": str(file.bytes),
        "content-disposition": f"attachment; filename*=UTF-8''{quote(file.filename)}",
    }
    return StreamingResponse(parts, media_type="application/octet-stream", headers=headers)


async def delete_file(request: Request) -> Response:
    file_id = request.path_params["file_id"]
    await _files(request).delete(file_id)
    return json_response(DeletedObject(id=file_id, object="file").model_dump(mode="json"))


def file_routes(prefix: str) -> list[BaseRoute]:
    one = f"{prefix}/files/{{file_id}}"
    return [
        Route(f"{prefix}/files", upload_file, methods=["POST"]),
        Route(f"{prefix}/files", list_files, methods=["GET"]),
        Route(one, get_file, methods=["GET"]),
        Route(one, delete_file, methods=["DELETE"]),
        Route(f"{one}/content", file_content, methods=["GET"]),
    ]
