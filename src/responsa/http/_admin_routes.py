"""``/v1/organization/...``: the Admin API's projects, service accounts, API keys, permissions and
admin keys, as openai 3.57's ``client.admin.organization`` calls them (under ``/v1`` only). The gate
lets only an admin key through to these paths (and an admin key nowhere else)."""

from __future__ import annotations

from typing import Any

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import BaseRoute, Route

from responsa.engine.projects import ProjectService
from responsa.protocol import (
    HOSTED_TOOL_PERMISSIONS,
    CreateAdminKeyRequest,
    CreateKeyRequest,
    CreateProjectRequest,
    CreateServiceAccountRequest,
    CreateSpendAlertRequest,
    InvalidRequest,
    UpdateModelPermissionsRequest,
    UpdateProjectRequest,
    UpdateRateLimitRequest,
    UpdateServiceAccountRequest,
    UpdateSpendAlertRequest,
    UpdateSpendLimitRequest,
)
from responsa.store import AuditFilter

from ._errors import json_response
from ._parsing import item_list_body, list_body, listed, paging, read_json, read_model
from ._services import services

__all__ = ["admin_routes", "is_admin_path"]

_BASE = "/v1/organization"
"""Where the admin routes are: under OpenAI's own prefix only."""


def is_admin_path(path: str) -> bool:
    """A path only an admin key may reach (and the only ones it may)."""
    return path.startswith(_BASE) and path[len(_BASE) : len(_BASE) + 1] in ("/", "")


def _service(request: Request) -> ProjectService:
    return services(request).projects


def _path(request: Request, name: str) -> str:
    return str(request.path_params[name])


def _answer(made: Any) -> Response:
    return json_response(made.model_dump(mode="json"))


def _deleted(object_type: str, object_id: str) -> Response:
    return json_response({"object": object_type, "id": object_id, "deleted": True})


def _flag(request: Request, name: str) -> bool:
    raw = request.query_params.get(name, "false").lower()
    if raw not in ("true", "false"):
        raise InvalidRequest(f"Invalid '{name}': {raw!r}. Expected true or false.", param=name, code="invalid_value")
    return raw == "true"


async def create_project(request: Request) -> Response:
    return _answer(await _service(request).create_project(await read_model(request, CreateProjectRequest)))


async def list_projects(request: Request) -> Response:
    page = paging(request, default_limit=20)
    found, more = await _service(request).list_projects(
        limit=page.limit, after=page.after, archived=_flag(request, "include_archived")
    )
    return json_response(item_list_body(found, more))


async def get_project(request: Request) -> Response:
    return _answer(await _service(request).get_project(_path(request, "project_id")))


async def update_project(request: Request) -> Response:
    body = await read_model(request, UpdateProjectRequest)
    return _answer(await _service(request).update_project(_path(request, "project_id"), body))


async def archive_project(request: Request) -> Response:
    return _answer(await _service(request).archive_project(_path(request, "project_id")))


async def get_model_permissions(request: Request) -> Response:
    return _answer(await _service(request).model_permissions(_path(request, "project_id")))


async def set_model_permissions(request: Request) -> Response:
    body = await read_model(request, UpdateModelPermissionsRequest)
    return _answer(await _service(request).set_model_permissions(_path(request, "project_id"), body))


async def delete_model_permissions(request: Request) -> Response:
    project_id = _path(request, "project_id")
    await _service(request).delete_model_permissions(project_id)
    return _deleted("project.model_permissions.deleted", project_id)


async def get_tool_permissions(request: Request) -> Response:
    return _answer(await _service(request).tool_permissions(_path(request, "project_id")))


async def set_tool_permissions(request: Request) -> Response:
    body = await read_json(request)
    changes: dict[str, bool] = {}
    for name in HOSTED_TOOL_PERMISSIONS:
        given = body.get(name)
        if given is None:
            continue
        if not isinstance(given, dict) or not isinstance(given.get("enabled"), bool):
            raise InvalidRequest(f"Invalid '{name}': expected {{\"enabled\": true or false}}.", param=f"{name}.enabled",
                                 code="invalid_value")  # fmt: skip
        changes[name] = given["enabled"]
    return _answer(await _service(request).set_tool_permissions(_path(request, "project_id"), changes))


async def get_spend_limit(request: Request) -> Response:
    return _answer(await _service(request).spending.limit(_path(request, "project_id")))


async def set_spend_limit(request: Request) -> Response:
    body = await read_model(request, UpdateSpendLimitRequest)
    return _answer(await _service(request).spending.set_limit(_path(request, "project_id"), body))


async def delete_spend_limit(request: Request) -> Response:
    project_id = _path(request, "project_id")
    await _service(request).spending.delete_limit(project_id)
    return _deleted("project.spend_limit.deleted", project_id)


async def list_rate_limits(request: Request) -> Response:
    """Every served model's limits (one page: ``after`` / ``before`` name a rate limit's id)."""
    page = paging(request, default_limit=100)
    found = await _service(request).rate_limits.list(_path(request, "project_id"), services(request).models)
    ids = [limit.id for limit in found]
    start = ids.index(page.after) + 1 if page.after in ids else 0
    end = ids.index(page.before) if page.before in ids else len(found)
    if page.before in ids and page.after not in ids:
        start = max(0, end - page.limit)
    shown = found[start:end][: page.limit]
    return json_response(item_list_body(shown, start + len(shown) < end))


async def update_rate_limit(request: Request) -> Response:
    body = await read_model(request, UpdateRateLimitRequest)
    project_id, rate_limit_id = _path(request, "project_id"), _path(request, "rate_limit_id")
    served = services(request).models
    return _answer(await _service(request).rate_limits.update(project_id, rate_limit_id, body, served))


async def create_spend_alert(request: Request) -> Response:
    body = await read_model(request, CreateSpendAlertRequest)
    return _answer(await _service(request).spending.create_alert(_path(request, "project_id"), body))


async def list_spend_alerts(request: Request) -> Response:
    return json_response(item_list_body(await _service(request).spending.alerts(_path(request, "project_id"))))


async def get_spend_alert(request: Request) -> Response:
    return _answer(await _service(request).spending.alert(_path(request, "project_id"), _path(request, "alert_id")))


async def update_spend_alert(request: Request) -> Response:
    body = await read_model(request, UpdateSpendAlertRequest)
    project_id, alert_id = _path(request, "project_id"), _path(request, "alert_id")
    return _answer(await _service(request).spending.update_alert(project_id, alert_id, body))


async def delete_spend_alert(request: Request) -> Response:
    project_id, alert_id = _path(request, "project_id"), _path(request, "alert_id")
    await _service(request).spending.delete_alert(project_id, alert_id)
    return _deleted("project.spend_alert.deleted", alert_id)


async def create_service_account(request: Request) -> Response:
    body = await read_model(request, CreateServiceAccountRequest)
    return _answer(await _service(request).create_service_account(_path(request, "project_id"), body))


async def list_service_accounts(request: Request) -> Response:
    page = paging(request, default_limit=20)
    found, more = await _service(request).list_service_accounts(
        _path(request, "project_id"), limit=page.limit, after=page.after
    )
    return json_response(item_list_body(found, more))


async def get_service_account(request: Request) -> Response:
    project_id, account_id = _path(request, "project_id"), _path(request, "service_account_id")
    return _answer(await _service(request).get_service_account(project_id, account_id))


async def update_service_account(request: Request) -> Response:
    project_id, account_id = _path(request, "project_id"), _path(request, "service_account_id")
    body = await read_model(request, UpdateServiceAccountRequest)
    return _answer(await _service(request).update_service_account(project_id, account_id, body))


async def delete_service_account(request: Request) -> Response:
    project_id, account_id = _path(request, "project_id"), _path(request, "service_account_id")
    await _service(request).delete_service_account(project_id, account_id)
    return _deleted("organization.project.service_account.deleted", account_id)


async def create_account_key(request: Request) -> Response:
    project_id, account_id = _path(request, "project_id"), _path(request, "service_account_id")
    body = await read_model(request, CreateKeyRequest)
    return _answer(await _service(request).create_account_key(project_id, account_id, body))


async def list_keys(request: Request) -> Response:
    page = paging(request, default_limit=20)
    access = request.query_params.get("owner_project_access", "active")
    if access not in ("active", "inactive", "any"):
        raise InvalidRequest(f"Invalid 'owner_project_access': {access!r}. Expected active, inactive or any.",
                             param="owner_project_access", code="invalid_value")  # fmt: skip
    found, more = await _service(request).list_keys(_path(request, "project_id"), limit=page.limit, after=page.after)
    if access == "inactive":  # every owner here has its project's access while its key exists
        found, more = [], False
    return json_response(item_list_body(found, more))


async def get_key(request: Request) -> Response:
    return _answer(await _service(request).get_key(_path(request, "project_id"), _path(request, "api_key_id")))


async def update_key(request: Request) -> Response:
    project_id, key_id = _path(request, "project_id"), _path(request, "api_key_id")
    body = await read_model(request, CreateKeyRequest)
    return _answer(await _service(request).update_key(project_id, key_id, body))


async def delete_key(request: Request) -> Response:
    project_id, key_id = _path(request, "project_id"), _path(request, "api_key_id")
    await _service(request).delete_key(project_id, key_id)
    return _deleted("organization.project.api_key.deleted", key_id)


def _effective(request: Request) -> tuple[int | None, int | None]:
    """``effective_at[gt|gte|lt|lte]`` as a half-open range of seconds."""
    bounds: dict[str, int] = {}
    for name in ("gt", "gte", "lt", "lte"):
        raw = request.query_params.get(f"effective_at[{name}]")
        if raw is not None:
            if not raw.isdigit():
                raise InvalidRequest(f"Invalid 'effective_at[{name}]': {raw!r}. Expected Unix seconds.",
                                     param=f"effective_at[{name}]", code="invalid_value")  # fmt: skip
            bounds[name] = int(raw)
    since = max(bounds.get("gte", 0), bounds["gt"] + 1 if "gt" in bounds else 0) or None
    until = min(bounds.get("lt", 2**62), bounds["lte"] + 1 if "lte" in bounds else 2**62)
    return since, None if until == 2**62 else until


async def list_audit_logs(request: Request) -> Response:
    page = paging(request, default_limit=20)
    if listed(request, "actor_emails"):
        raise InvalidRequest("There are no users here: keys act, not people ('actor_emails' matches nothing); "
                             "filter by 'actor_ids'.", param="actor_emails", code="unsupported_parameter")  # fmt: skip
    since, until = _effective(request)
    wanted = AuditFilter(
        types=listed(request, "event_types"),
        project_ids=listed(request, "project_ids"),
        actor_ids=listed(request, "actor_ids"),
        resource_ids=listed(request, "resource_ids"),
        since=since,
        until=until,
    )
    found, more = await _service(request).audit_logs(
        wanted, tenant_only=_flag(request, "tenant_only"), limit=page.limit, after=page.after, before=page.before
    )
    return json_response(list_body(found, more))


async def create_admin_key(request: Request) -> Response:
    return _answer(await _service(request).create_admin_key(await read_model(request, CreateAdminKeyRequest)))


async def list_admin_keys(request: Request) -> Response:
    page = paging(request, default_limit=20, max_limit=100)
    found, more = await _service(request).list_admin_keys(limit=page.limit, order=page.order, after=page.after)
    return json_response(item_list_body(found, more))


async def get_admin_key(request: Request) -> Response:
    return _answer(await _service(request).get_admin_key(_path(request, "key_id")))


async def delete_admin_key(request: Request) -> Response:
    key_id = _path(request, "key_id")
    await _service(request).delete_admin_key(key_id)
    return _deleted("organization.admin_api_key.deleted", key_id)


def admin_routes() -> list[BaseRoute]:
    base = _BASE
    project = f"{base}/projects/{{project_id}}"
    account = f"{project}/service_accounts/{{service_account_id}}"
    return [
        Route(f"{base}/projects", create_project, methods=["POST"]),
        Route(f"{base}/projects", list_projects, methods=["GET"]),
        Route(project, get_project, methods=["GET"]),
        Route(project, update_project, methods=["POST"]),
        Route(f"{project}/archive", archive_project, methods=["POST"]),
        Route(f"{project}/model_permissions", get_model_permissions, methods=["GET"]),
        Route(f"{project}/model_permissions", set_model_permissions, methods=["POST"]),
        Route(f"{project}/model_permissions", delete_model_permissions, methods=["DELETE"]),
        Route(f"{project}/hosted_tool_permissions", get_tool_permissions, methods=["GET"]),
        Route(f"{project}/hosted_tool_permissions", set_tool_permissions, methods=["POST"]),
        Route(f"{project}/spend_limit", get_spend_limit, methods=["GET"]),
        Route(f"{project}/spend_limit", set_spend_limit, methods=["POST"]),
        Route(f"{project}/spend_limit", delete_spend_limit, methods=["DELETE"]),
        Route(f"{project}/rate_limits", list_rate_limits, methods=["GET"]),
        Route(f"{project}/rate_limits/{{rate_limit_id}}", update_rate_limit, methods=["POST"]),
        Route(f"{project}/spend_alerts", create_spend_alert, methods=["POST"]),
        Route(f"{project}/spend_alerts", list_spend_alerts, methods=["GET"]),
        Route(f"{project}/spend_alerts/{{alert_id}}", get_spend_alert, methods=["GET"]),
        Route(f"{project}/spend_alerts/{{alert_id}}", update_spend_alert, methods=["POST"]),
        Route(f"{project}/spend_alerts/{{alert_id}}", delete_spend_alert, methods=["DELETE"]),
        Route(f"{project}/service_accounts", create_service_account, methods=["POST"]),
        Route(f"{project}/service_accounts", list_service_accounts, methods=["GET"]),
        Route(account, get_service_account, methods=["GET"]),
        Route(account, update_service_account, methods=["POST"]),
        Route(account, delete_service_account, methods=["DELETE"]),
        Route(f"{account}/api_keys", create_account_key, methods=["POST"]),
        Route(f"{project}/api_keys", list_keys, methods=["GET"]),
        Route(f"{project}/api_keys/{{api_key_id}}", get_key, methods=["GET"]),
        Route(f"{project}/api_keys/{{api_key_id}}", update_key, methods=["POST"]),
        Route(f"{project}/api_keys/{{api_key_id}}", delete_key, methods=["DELETE"]),
        Route(f"{base}/audit_logs", list_audit_logs, methods=["GET"]),
        Route(f"{base}/admin_api_keys", create_admin_key, methods=["POST"]),
        Route(f"{base}/admin_api_keys", list_admin_keys, methods=["GET"]),
        Route(f"{base}/admin_api_keys/{{key_id}}", get_admin_key, methods=["GET"]),
        Route(f"{base}/admin_api_keys/{{key_id}}", delete_admin_key, methods=["DELETE"]),
    ]
