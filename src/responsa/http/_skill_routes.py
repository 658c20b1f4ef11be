"""``/v1/skills``: skills and their versions (OpenAI's shapes, as openai 3.57's ``client.skills`` calls
them): created from a directory's files (multipart ``files``, each named by its path in the folder) or
one zip, listed, updated (the default version), deleted, and their files read back as a zip."""

from __future__ import annotations

from urllib.parse import quote

from starlette.datastructures import UploadFile
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import BaseRoute, Route

from responsa.engine.skills import SkillService
from responsa.engine.skills._bundle import MAX_BUNDLE_BYTES
from responsa.protocol import DeletedObject, InvalidRequest

from ._errors import json_response
from ._file_routes import FORM_SLACK, counting
from ._parsing import item_list_body, paging, read_json
from ._services import services, tenant_of

__all__ = ["skill_routes"]


def _service(request: Request) -> SkillService:
    return services(request).skills.for_tenant(tenant_of(request))


def _skill_id(request: Request) -> str:
    return str(request.path_params["skill_id"])


async def _uploaded(request: Request) -> tuple[list[tuple[str, bytes]], dict[str, str]]:
    """The multipart ``files`` (or ``files[]``) parts, each with its name, and the form's other fields."""
    if not request.headers.get("content-type", "").startswith("multipart/form-data"):
        raise InvalidRequest("Upload a skill as multipart/form-data: 'files' (a folder's files, or one zip).",
                             param="files", code="invalid_value")  # fmt: skip
    async with counting(request, MAX_BUNDLE_BYTES + FORM_SLACK).form(max_files=1000, max_fields=16) as form:
        parts = [*form.getlist("files"), *form.getlist("files[]")]
        files = [(part.filename or "upload", await part.read()) for part in parts if isinstance(part, UploadFile)]
        fields = {key: value for key, value in form.items() if isinstance(value, str)}
    return files, fields


async def create_skill(request: Request) -> Response:
    files, _ = await _uploaded(request)
    return json_response((await _service(request).create(files)).model_dump(mode="json"))


async def list_skills(request: Request) -> Response:
    page = paging(request, default_limit=20)
    found, more = await _service(request).page(limit=page.limit, order=page.order, after=page.after)
    return json_response(item_list_body(found, more))


async def get_skill(request: Request) -> Response:
    return json_response((await _service(request).get(_skill_id(request))).model_dump(mode="json"))


async def update_skill(request: Request) -> Response:
    body = await read_json(request)
    version = body.get("default_version") if isinstance(body, dict) else None
    if not isinstance(version, str | int) or isinstance(version, bool):
        raise InvalidRequest("Missing required parameter: 'default_version'.", param="default_version",
                             code="missing_required_parameter")  # fmt: skip
    return json_response(
        (await _service(request).set_default(_skill_id(request), str(version))).model_dump(mode="json")
    )


async def delete_skill(request: Request) -> Response:
    await _service(request).delete(_skill_id(request))
    return json_response(DeletedObject(id=_skill_id(request), object="skill.deleted").model_dump(mode="json"))


async def skill_content(request: Request) -> Response:
    version = request.path_params.get("version")
    name, data = await _service(request).content(_skill_id(request), str(version) if version else None)
    headers = {"content-disposition": f"attachment; filename*=UTF-8''{quote(name)}"}
    return Response(data, media_type="application/zip", headers=headers)


async def create_version(request: Request) -> Response:
    files, fields = await _uploaded(request)
    default = fields.get("default", "false").lower() in ("true", "1")
    version = await _service(request).add_version(_skill_id(request), files, default)
    return json_response(version.model_dump(mode="json"))


async def list_versions(request: Request) -> Response:
    page = paging(request, default_limit=20)
    found, more = await _service(request).versions(_skill_id(request), limit=page.limit, order=page.order,
                                                   after=page.after)  # fmt: skip
    return json_response(item_list_body(found, more))


async def get_version(request: Request) -> Response:
    version = await _service(request).version(_skill_id(request), str(request.path_params["version"]))
    return json_response(version.model_dump(mode="json"))


async def delete_version(request: Request) -> Response:
    version = str(request.path_params["version"])
    version_id = await _service(request).delete_version(_skill_id(request), version)
    return json_response({"id": version_id, "object": "skill.version.deleted", "deleted": True, "version": version})


def skill_routes(prefix: str) -> list[BaseRoute]:
    one = f"{prefix}/skills/{{skill_id}}"
    version = f"{one}/versions/{{version}}"
    return [
        Route(f"{prefix}/skills", create_skill, methods=["POST"]),
        Route(f"{prefix}/skills", list_skills, methods=["GET"]),
        Route(one, get_skill, methods=["GET"]),
        Route(one, update_skill, methods=["POST"]),
        Route(one, delete_skill, methods=["DELETE"]),
        Route(f"{one}/content", skill_content, methods=["GET"]),
        Route(f"{one}/versions", create_version, methods=["POST"]),
        Route(f"{one}/versions", list_versions, methods=["GET"]),
        Route(version, get_version, methods=["GET"]),
        Route(version, delete_version, methods=["DELETE"]),
        Route(f"{version}/content", skill_content, methods=["GET"]),
    ]
