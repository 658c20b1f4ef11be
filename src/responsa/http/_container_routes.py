"""``/v1/containers``: containers and their files (OpenAI's shapes), where the code interpreter runs."""

from __future__ import annotations

from urllib.parse import quote

from starlette.datastructures import UploadFile
from starlette.requests import Request
from starlette.responses import Response, StreamingResponse
from starlette.routing import BaseRoute, Route

from responsa.engine import ContainerService
from responsa.engine.skills import mounted_files
from responsa.protocol import CreateContainerFileRequest, CreateContainerRequest, DeletedObject, InvalidRequest

from ._errors import json_response
from ._file_routes import FORM_SLACK, counting, upload_chunks
from ._parsing import item_list_body, paging, read_model
from ._services import services, tenant_of

__all__ = ["container_routes"]


def _service(request: Request) -> ContainerService:
    return services(request).containers.for_tenant(tenant_of(request))


def _ids(request: Request) -> tuple[str, str]:
    return str(request.path_params["container_id"]), str(request.path_params.get("file_id", ""))


async def create_container(request: Request) -> Response:
    """A container; the skills it names are the tenant's (or given inline), checked before it is made."""
    body = await read_model(request, CreateContainerRequest)
    skills = services(request).skills.for_tenant(tenant_of(request))
    bundles = await skills.mounted(body.skills, "skills") if body.skills else []
    container = await _service(request).create(body, mounted_files(bundles))
    return json_response(container.model_dump(mode="json"))


async def list_containers(request: Request) -> Response:
    page = paging(request, default_limit=20)
    found, more = await _service(request).page(limit=page.limit, order=page.order, after=page.after,
                                               name=request.query_params.get("name"))  # fmt: skip
    return json_response(item_list_body(found, more))


async def get_container(request: Request) -> Response:
    container_id, _ = _ids(request)
    return json_response((await _service(request).get(container_id)).model_dump(mode="json"))


async def delete_container(request: Request) -> Response:
    container_id, _ = _ids(request)
    await _service(request).delete(container_id)
    return json_response(DeletedObject(id=container_id, object="container.deleted").model_dump(mode="json"))


async def create_file(request: Request) -> Response:
    """A multipart upload (``file``), or JSON naming an uploaded file (``file_id``)."""
    service, (container_id, _) = _service(request), _ids(request)
    if not request.headers.get("content-type", "").startswith("multipart/form-data"):
        body = await read_model(request, CreateContainerFileRequest)
        return json_response((await service.add_file(container_id, body.file_id)).model_dump(mode="json"))
    limit = services(request).files.max_bytes + FORM_SLACK
    async with counting(request, limit).form(max_files=1, max_fields=8) as form:
        upload, file_id = form.get("file"), form.get("file_id")
        if isinstance(file_id, str) and file_id:
            file = await service.add_file(container_id, file_id)
        elif isinstance(upload, UploadFile):
            file = await service.add_upload(container_id, upload.filename or "upload", upload_chunks(upload))
        else:
            raise InvalidRequest("Missing required parameter: 'file' or 'file_id'.", param="file",
                                 code="missing_required_parameter")  # fmt: skip
    return json_response(file.model_dump(mode="json"))


async def list_files(request: Request) -> Response:
    container_id, _ = _ids(request)
    page = paging(request, default_limit=20)
    found, more = await _service(request).list_files(container_id, limit=page.limit, order=page.order,
                                                     after=page.after)  # fmt: skip
    return json_response(item_list_body(found, more))


async def get_file(request: Request) -> Response:
    return json_response((await _service(request).file(*_ids(request))).model_dump(mode="json"))


async def file_content(request: Request) -> Response:
    file, chunks = await _service(request).content(*_ids(request))
    name = file.path.rsplit("/", 1)[-1]
    headers = {"content-disposition": f"attachment; filename*=UTF-8''{quote(name)}"}
    return StreamingResponse(chunks, media_type="application/octet-stream", headers=headers)


async def delete_file(request: Request) -> Response:
    await _service(request).delete_file(*_ids(request))
    _, file_id = _ids(request)
    return json_response(DeletedObject(id=file_id, object="container.file.deleted").model_dump(mode="json"))


def container_routes(prefix: str) -> list[BaseRoute]:
    one = f"{prefix}/containers/{{container_id}}"
    file = f"{one}/files/{{file_id}}"
    return [
        Route(f"{prefix}/containers", create_container, methods=["POST"]),
        Route(f"{prefix}/containers", list_containers, methods=["GET"]),
        Route(one, get_container, methods=["GET"]),
        Route(one, delete_container, methods=["DELETE"]),
        Route(f"{one}/files", create_file, methods=["POST"]),
        Route(f"{one}/files", list_files, methods=["GET"]),
        Route(file, get_file, methods=["GET"]),
        Route(file, delete_file, methods=["DELETE"]),
        Route(f"{file}/content", file_content, methods=["GET"]),
    ]
