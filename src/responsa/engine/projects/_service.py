"""The Admin API's projects service: projects (each a tenant), their service accounts and API keys,
their model and hosted-tool permissions, and the admin keys. Every change is read back into this
process's key directory before the answer (so it holds here at once; elsewhere within a poll).

Projects from the settings (the keys file's tenants, ``--api-key``'s) are written at each start and
are read-only here: the file is where they change."""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any

import orjson

from responsa.config import ApiKey
from responsa.protocol import (
    HOSTED_TOOL_PERMISSIONS,
    AdminApiKeyObject,
    AdminKeyCreated,
    CreateAdminKeyRequest,
    CreatedKey,
    CreateKeyRequest,
    CreateProjectRequest,
    CreateServiceAccountRequest,
    HostedToolPermissionsObject,
    InvalidRequest,
    KeyOwner,
    ModelPermissionsObject,
    NotFound,
    OwnerServiceAccount,
    ProjectApiKeyObject,
    ProjectObject,
    ServiceAccountCreated,
    ServiceAccountObject,
    ToolPermission,
    UpdateModelPermissionsRequest,
    UpdateProjectRequest,
    UpdateServiceAccountRequest,
    new_id,
)
from responsa.store import AuditFilter, KeyRow, Order, ProjectRepository, ProjectRow, ServiceAccountRow

from ._directory import KeyDirectory
from ._rate_limits import ProjectRateLimits
from ._secrets import ADMIN_PREFIX, PROJECT_PREFIX, new_secret, redacted, secret_hash
from ._spending import ProjectSpending

__all__ = ["DEFAULT_PROJECT", "ProjectService"]

DEFAULT_PROJECT = "default"
"""The project of the tenant a server without keys serves everything as (made at start)."""

_FROM_SETTINGS = "keys_file"
_FILE_KEY = "key_file_"
"""The id prefix of the settings' keys as the store lists them."""


def project_object(row: ProjectRow) -> ProjectObject:
    archived = row.archived_at is not None
    return ProjectObject(id=row.id, name=row.name, created_at=row.created_at, archived_at=row.archived_at,
                         status="archived" if archived else "active")  # fmt: skip


def _account_object(row: ServiceAccountRow) -> ServiceAccountObject:
    return ServiceAccountObject(id=row.id, name=row.name, role=row.role, created_at=row.created_at)


def _no_project(project_id: str) -> NotFound:
    return NotFound(f"No project found with id '{project_id}'.", param="project_id")


def _check_scopes(scopes: list[str] | None) -> None:
    if scopes:
        raise InvalidRequest("Key scopes are not supported here: a key may do all its project may (send [] or "
                             "leave 'scopes' out).", param="scopes", code="unsupported_value")  # fmt: skip


def _expiry(seconds: int | None, now: int) -> int | None:
    return None if seconds is None else now + seconds


class ProjectService:
    """Projects, their service accounts, keys and permissions, and the admin keys."""

    def __init__(self, store: ProjectRepository, directory: KeyDirectory) -> None:
        self._store = store
        self._directory = directory
        self.spending = ProjectSpending(store, directory, self._project, self._changed)
        """Spend limits and spend alerts."""
        self.rate_limits = ProjectRateLimits(store, self._project, self._changed)
        """Rate limits per model."""

    async def _changed(self, kind: str, resource_id: str, project_id: str | None, **details: Any) -> None:
        """A change made: logged (``kind``, an audit log type, with its ``details``), then read back into
        this process's key directory, both before the answer."""
        await self._directory.audit.log(kind, resource_id, details, project_id)
        await self._directory.refresh(force=True)

    async def start(self, keys: Sequence[ApiKey]) -> None:
        """The default project and the settings' keys as projects (read-only here), written at start
        where the store does not hold them yet (a restart with the same settings writes nothing); then
        the directory reads the store."""
        now = int(time.time())
        projects = {row.id: row for row in await self._store.all_projects()}
        held = {row.id: row for row in await self._store.all_keys() if row.id.startswith(_FILE_KEY)}
        wanted = [ProjectRow(DEFAULT_PROJECT, "Default project", now, source=DEFAULT_PROJECT)]
        wanted += [ProjectRow(key.tenant, key.tenant, now, source=_FROM_SETTINGS) for key in keys]
        for project in wanted:
            known = projects.get(project.id)
            if known is None or (known.name, known.source) != (project.name, project.source):
                await self._store.put_project(project)
        ids = []
        for key in keys:
            hashed = secret_hash(key.key)
            ids.append(_FILE_KEY + hashed[:24])
            if ids[-1] not in held:
                await self._store.put_key(KeyRow(ids[-1], hashed, "keys file", redacted(key.key), now, key.tenant))
        if set(held) - set(ids):
            await self._store.delete_keys_except(ids, _FILE_KEY)
        await self._directory.attach(self._store)

    # Projects

    async def _project(self, project_id: str, changing: bool = False) -> ProjectRow:
        row = await self._store.get_project(project_id)
        if row is None:
            raise _no_project(project_id)
        if changing and row.source == _FROM_SETTINGS:
            raise InvalidRequest(f"Project '{project_id}' comes from the server's keys: change it there.",
                                 param="project_id", code="read_only_project")  # fmt: skip
        if changing and row.archived_at is not None:
            raise InvalidRequest(f"Project '{project_id}' is archived.", param="project_id", code="project_archived")
        return row

    async def create_project(self, request: CreateProjectRequest) -> ProjectObject:
        row = ProjectRow(new_id("proj"), request.name, int(time.time()))
        await self._store.create_project(row)
        await self._changed("project.created", row.id, row.id, data={"name": row.name, "title": row.name})
        return project_object(row)

    async def get_project(self, project_id: str) -> ProjectObject:
        return project_object(await self._project(project_id))

    async def list_projects(self, *, limit: int, after: str | None, archived: bool) -> tuple[list[ProjectObject], bool]:
        rows, more = await self._store.list_projects(limit=limit, after=after, archived=archived)
        return [project_object(row) for row in rows], more

    async def update_project(self, project_id: str, request: UpdateProjectRequest) -> ProjectObject:
        row = await self._project(project_id, changing=True)
        if request.name is not None:
            row = ProjectRow(**{**row.__dict__, "name": request.name})
            await self._store.update_project(row)
            await self._changed("project.updated", row.id, row.id, changes_requested={"title": request.name})
        return project_object(row)

    async def archive_project(self, project_id: str) -> ProjectObject:
        row = await self._project(project_id, changing=True)
        if row.source == DEFAULT_PROJECT:
            raise InvalidRequest("The default project cannot be archived.", param="project_id", code="invalid_value")
        row = ProjectRow(**{**row.__dict__, "archived_at": int(time.time())})
        await self._store.update_project(row)
        await self._changed("project.archived", row.id, row.id)
        return project_object(row)

    # Permissions

    async def model_permissions(self, project_id: str) -> ModelPermissionsObject:
        row = await self._project(project_id)
        return ModelPermissionsObject(**orjson.loads(row.model_permissions)) if row.model_permissions else (
            ModelPermissionsObject())  # fmt: skip

    async def set_model_permissions(
        self, project_id: str, request: UpdateModelPermissionsRequest
    ) -> ModelPermissionsObject:
        row = await self._project(project_id, changing=True)
        made = ModelPermissionsObject(mode=request.mode, model_ids=list(dict.fromkeys(request.model_ids)))
        stored = orjson.dumps({"mode": made.mode, "model_ids": made.model_ids}).decode()
        await self._store.update_project(ProjectRow(**{**row.__dict__, "model_permissions": stored}))
        await self._changed(
            "project.updated", row.id, row.id, changes_requested={"model_permissions": made.model_dump()}
        )
        return made

    async def delete_model_permissions(self, project_id: str) -> None:
        row = await self._project(project_id, changing=True)
        await self._store.update_project(ProjectRow(**{**row.__dict__, "model_permissions": None}))
        await self._changed("project.updated", row.id, row.id, changes_requested={"model_permissions": None})

    async def tool_permissions(self, project_id: str) -> HostedToolPermissionsObject:
        row = await self._project(project_id)
        stored = orjson.loads(row.tool_permissions) if row.tool_permissions else {}
        return HostedToolPermissionsObject(
            **{name: ToolPermission(enabled=stored.get(name, True)) for name in HOSTED_TOOL_PERMISSIONS}
        )

    async def set_tool_permissions(self, project_id: str, changes: dict[str, bool]) -> HostedToolPermissionsObject:
        """``changes``: tool name to enabled, for the tools the update names (the others stay)."""
        row = await self._project(project_id, changing=True)
        stored = orjson.loads(row.tool_permissions) if row.tool_permissions else {}
        stored.update(changes)
        await self._store.update_project(
            ProjectRow(**{**row.__dict__, "tool_permissions": orjson.dumps(stored).decode()})
        )
        await self._changed("project.updated", row.id, row.id, changes_requested={"hosted_tool_permissions": changes})
        return await self.tool_permissions(project_id)

    # Service accounts and their keys

    async def _new_key(self, request: CreateKeyRequest, project_id: str, account_id: str) -> tuple[KeyRow, CreatedKey]:
        _check_scopes(request.scopes)
        now, secret = int(time.time()), new_secret(PROJECT_PREFIX)
        row = KeyRow(new_id("key"), secret_hash(secret), "Secret key", redacted(secret), now, project_id, account_id,
                     _expiry(request.expires_in_seconds, now))  # fmt: skip
        return row, CreatedKey(id=row.id, name=row.name, value=secret, created_at=now, expires_at=row.expires_at)

    async def create_service_account(
        self, project_id: str, request: CreateServiceAccountRequest
    ) -> ServiceAccountCreated:
        await self._project(project_id, changing=True)
        only = bool(request.create_service_account_only)
        account = ServiceAccountRow(new_id("svc_acct"), project_id, request.name, "none" if only else "member",
                                    int(time.time()))  # fmt: skip
        key, created = (None, None) if only else await self._new_key(request, project_id, account.id)
        await self._store.create_service_account(account, key)
        await self._changed("service_account.created", account.id, project_id, data={"role": account.role})
        if key is not None:
            await self._directory.audit.log("api_key.created", key.id, {"data": {"scopes": []}}, project_id)
        return ServiceAccountCreated(**_account_object(account).model_dump(exclude={"object"}), api_key=created)

    async def _account(self, project_id: str, account_id: str) -> ServiceAccountRow:
        await self._project(project_id)
        account = await self._store.get_service_account(project_id, account_id)
        if account is None:
            raise NotFound(f"No service account found with id '{account_id}'.", param="service_account_id")
        return account

    async def get_service_account(self, project_id: str, account_id: str) -> ServiceAccountObject:
        return _account_object(await self._account(project_id, account_id))

    async def list_service_accounts(
        self, project_id: str, *, limit: int, after: str | None
    ) -> tuple[list[ServiceAccountObject], bool]:
        await self._project(project_id)
        rows, more = await self._store.list_service_accounts(project_id, limit=limit, after=after)
        return [_account_object(row) for row in rows], more

    async def update_service_account(
        self, project_id: str, account_id: str, request: UpdateServiceAccountRequest
    ) -> ServiceAccountObject:
        await self._project(project_id, changing=True)
        account = await self._account(project_id, account_id)
        if request.role is not None:
            account = ServiceAccountRow(**{**account.__dict__, "role": request.role})
            await self._store.update_service_account(account)
            await self._changed(
                "service_account.updated", account.id, project_id, changes_requested={"role": request.role}
            )
        return _account_object(account)

    async def delete_service_account(self, project_id: str, account_id: str) -> None:
        await self._project(project_id, changing=True)
        if not await self._store.delete_service_account(project_id, account_id):
            raise NotFound(f"No service account found with id '{account_id}'.", param="service_account_id")
        await self._changed("service_account.deleted", account_id, project_id)

    async def create_account_key(self, project_id: str, account_id: str, request: CreateKeyRequest) -> CreatedKey:
        await self._project(project_id, changing=True)
        await self._account(project_id, account_id)
        row, created = await self._new_key(request, project_id, account_id)
        await self._store.create_key(row)
        await self._changed("api_key.created", row.id, project_id, data={"scopes": []})
        return created

    # Project API keys

    async def _key_objects(self, rows: list[KeyRow]) -> list[ProjectApiKeyObject]:
        accounts = {a.id: a for a in await self._store.get_service_accounts(
            sorted({row.service_account_id for row in rows if row.service_account_id}))}  # fmt: skip
        made = []
        for row in rows:
            account = accounts.get(row.service_account_id or "")
            owner = KeyOwner(service_account=None if account is None else OwnerServiceAccount(
                id=account.id, name=account.name, role=account.role, created_at=account.created_at))  # fmt: skip
            made.append(ProjectApiKeyObject(id=row.id, name=row.name, redacted_value=row.redacted_value,
                                            created_at=row.created_at, last_used_at=row.last_used_at,
                                            expires_at=row.expires_at, owner=owner))  # fmt: skip
        return made

    async def _key(self, project_id: str, key_id: str) -> KeyRow:
        await self._project(project_id)
        await self._directory.flush_uses()
        row = await self._store.get_key(project_id, key_id)
        if row is None:
            raise NotFound(f"No API key found with id '{key_id}'.", param="api_key_id")
        return row

    async def get_key(self, project_id: str, key_id: str) -> ProjectApiKeyObject:
        return (await self._key_objects([await self._key(project_id, key_id)]))[0]

    async def list_keys(
        self, project_id: str, *, limit: int, after: str | None
    ) -> tuple[list[ProjectApiKeyObject], bool]:
        await self._project(project_id)
        await self._directory.flush_uses()
        rows, more = await self._store.list_keys(project_id, limit=limit, order="asc", after=after)
        return await self._key_objects(rows), more

    async def update_key(self, project_id: str, key_id: str, request: CreateKeyRequest) -> ProjectApiKeyObject:
        await self._project(project_id, changing=True)
        row = await self._key(project_id, key_id)
        _check_scopes(request.scopes)
        now = int(time.time())
        if row.expires_at is not None and row.expires_at <= now:
            raise InvalidRequest(f"API key '{key_id}' has expired.", param="api_key_id", code="key_expired")
        if request.expires_in_seconds is not None:
            row = KeyRow(**{**row.__dict__, "expires_at": _expiry(request.expires_in_seconds, now)})
            await self._store.set_expiry(key_id, row.expires_at)
            await self._changed("api_key.updated", key_id, project_id,
                                changes_requested={"expires_in_seconds": request.expires_in_seconds})  # fmt: skip
        return (await self._key_objects([row]))[0]

    async def delete_key(self, project_id: str, key_id: str) -> None:
        await self._project(project_id, changing=True)
        if key_id.startswith(_FILE_KEY) or not await self._store.delete_key(project_id, key_id):
            raise NotFound(f"No API key found with id '{key_id}'.", param="api_key_id")
        await self._changed("api_key.deleted", key_id, project_id)

    # Audit log

    async def audit_logs(
        self, wanted: AuditFilter, *, tenant_only: bool, limit: int, after: str | None, before: str | None
    ) -> tuple[list[dict[str, Any]], bool]:
        """Newest first; the refusals not written yet are written first."""
        await self._directory.audit.flush()
        if tenant_only:
            if any(kind not in _TENANT_SCOPED for kind in wanted.types):
                raise InvalidRequest("With 'tenant_only', every event type must be a tenant's (tenant.*).",
                                     param="event_types", code="invalid_value")  # fmt: skip
            wanted = AuditFilter(**{**wanted.__dict__, "types": wanted.types or _TENANT_SCOPED})
        rows, more = await self._store.audit_logs(wanted, limit=limit, after=after, before=before)
        return [orjson.loads(row.body) for row in rows], more

    # Admin keys

    async def create_admin_key(self, request: CreateAdminKeyRequest) -> AdminKeyCreated:
        now, secret = int(time.time()), new_secret(ADMIN_PREFIX)
        row = KeyRow(new_id("key"), secret_hash(secret), request.name, redacted(secret), now,
                     expires_at=_expiry(request.expires_in_seconds, now))  # fmt: skip
        await self._store.create_key(row)
        await self._changed("tenant.admin_api_key.created", row.id, None, data={"name": row.name})
        return AdminKeyCreated(**_admin_object(row).model_dump(exclude={"object"}), value=secret)

    async def get_admin_key(self, key_id: str) -> AdminApiKeyObject:
        await self._directory.flush_uses()
        row = await self._store.get_key(None, key_id)
        if row is None:
            raise NotFound(f"No admin API key found with id '{key_id}'.", param="key_id")
        return _admin_object(row)

    async def list_admin_keys(
        self, *, limit: int, order: Order, after: str | None
    ) -> tuple[list[AdminApiKeyObject], bool]:
        await self._directory.flush_uses()
        rows, more = await self._store.list_keys(None, limit=limit, order=order, after=after)
        return [_admin_object(row) for row in rows], more

    async def delete_admin_key(self, key_id: str) -> None:
        if not await self._store.delete_key(None, key_id):
            raise NotFound(f"No admin API key found with id '{key_id}'.", param="key_id")
        await self._changed("tenant.admin_api_key.deleted", key_id, None)


_TENANT_SCOPED = ("tenant.admin_api_key.created", "tenant.admin_api_key.deleted")
"""The audit log types this server writes that are the organization's own (``tenant_only``)."""


def _admin_object(row: KeyRow) -> AdminApiKeyObject:
    return AdminApiKeyObject(id=row.id, name=row.name, redacted_value=row.redacted_value, created_at=row.created_at,
                             last_used_at=row.last_used_at, expires_at=row.expires_at)  # fmt: skip
