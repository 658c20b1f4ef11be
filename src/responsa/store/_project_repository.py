"""The project repository: the organization's projects (each a tenant), their service accounts and
API keys (kept as a hash of the secret, never the secret), their permissions, and the admin keys; and
a count of changes, which every process reads to know when the keys it holds are stale."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

from ._base import Order

__all__ = ["AuditFilter", "AuditRow", "KeyRow", "ProjectRepository", "ProjectRow", "ServiceAccountRow", "SpendAlertRow"]


@dataclass(frozen=True)
class ProjectRow:
    id: str
    """Also its tenant: the id of what it owns."""
    name: str
    created_at: int
    archived_at: int | None = None
    source: str = "api"
    """``api``, or ``keys_file`` (made at start from the keys file; read-only through the API)."""
    model_permissions: str | None = None
    """JSON ``{"mode", "model_ids"}``; None: every model."""
    tool_permissions: str | None = None
    """JSON ``{tool type: enabled}``; None: every hosted tool."""
    spend_limit: str | None = None
    """JSON ``{"threshold_amount" (US cents), "currency", "interval"}``; None: no limit."""
    rate_limits: str | None = None
    """JSON ``{model: {"max_requests_per_1_minute", "max_tokens_per_1_minute", "max_requests_per_1_day"}}``;
    None: no model's own limits."""


@dataclass(frozen=True)
class ServiceAccountRow:
    id: str
    project_id: str
    name: str
    role: str
    created_at: int


@dataclass(frozen=True)
class KeyRow:
    """An API key: a project's (owned by a service account) or, with no project, an admin key."""

    id: str
    secret_hash: str
    name: str
    redacted_value: str
    created_at: int
    project_id: str | None = None
    service_account_id: str | None = None
    expires_at: int | None = None
    last_used_at: int | None = None


@dataclass(frozen=True)
class SpendAlertRow:
    id: str
    project_id: str
    threshold_amount: int
    """US cents."""
    created_at: int
    fired_for: int | None = None
    """The start of the month it last fired in."""


@dataclass(frozen=True)
class AuditRow:
    """One audit log entry: what it is filtered by, and its JSON as listed."""

    id: str
    effective_at: int
    type: str
    project_id: str | None
    actor_id: str | None
    resource_id: str | None
    body: str


@dataclass(frozen=True)
class AuditFilter:
    """Which entries a listing reads (empty: any); ``since``/``until``: effective at or after / before."""

    types: Sequence[str] = ()
    project_ids: Sequence[str] = ()
    actor_ids: Sequence[str] = ()
    resource_ids: Sequence[str] = ()
    since: int | None = None
    until: int | None = None


class ProjectRepository(Protocol):
    async def changes(self) -> int:
        """How many changes of projects and keys the store has seen (any process's)."""
        ...

    async def put_project(self, project: ProjectRow) -> None:
        """Create or replace (the keys file's projects, at each start); counts a change."""
        ...

    async def create_project(self, project: ProjectRow) -> None: ...

    async def get_project(self, project_id: str) -> ProjectRow | None: ...

    async def list_projects(
        self, *, limit: int, after: str | None, archived: bool
    ) -> tuple[list[ProjectRow], bool]: ...

    async def update_project(self, project: ProjectRow) -> bool:
        """Write the project's fields (name, archived, permissions); False: no such project."""
        ...

    async def all_projects(self) -> list[ProjectRow]: ...

    async def create_service_account(self, account: ServiceAccountRow, key: KeyRow | None) -> None: ...

    async def get_service_account(self, project_id: str, account_id: str) -> ServiceAccountRow | None: ...

    async def list_service_accounts(
        self, project_id: str, *, limit: int, after: str | None
    ) -> tuple[list[ServiceAccountRow], bool]: ...

    async def update_service_account(self, account: ServiceAccountRow) -> bool: ...

    async def delete_service_account(self, project_id: str, account_id: str) -> bool:
        """The account and its keys."""
        ...

    async def create_key(self, key: KeyRow) -> None: ...

    async def put_key(self, key: KeyRow) -> None:
        """Create or replace by id (the keys file's keys, at each start)."""
        ...

    async def get_key(self, project_id: str | None, key_id: str) -> KeyRow | None:
        """A project's key (``project_id``), or an admin key (None)."""
        ...

    async def list_keys(
        self, project_id: str | None, *, limit: int, order: Order, after: str | None
    ) -> tuple[list[KeyRow], bool]: ...

    async def set_expiry(self, key_id: str, expires_at: int | None) -> None: ...

    async def delete_key(self, project_id: str | None, key_id: str) -> bool: ...

    async def delete_keys_except(self, source_ids: list[str], prefix: str) -> None:
        """Delete the keys whose id begins with ``prefix`` but for ``source_ids`` (the keys file's, when a
        key left the file)."""
        ...

    async def all_keys(self) -> list[KeyRow]: ...

    async def record_use(self, used: dict[str, int]) -> None:
        """Each key's last use (key id to Unix seconds), written in one transaction; not a change."""
        ...

    async def get_service_accounts(self, ids: list[str]) -> list[ServiceAccountRow]: ...

    async def add_audit(self, rows: Sequence[AuditRow]) -> None: ...

    async def create_alert(self, alert: SpendAlertRow) -> None: ...

    async def get_alert(self, project_id: str, alert_id: str) -> SpendAlertRow | None: ...

    async def list_alerts(self, project_id: str | None) -> list[SpendAlertRow]:
        """A project's alerts (None: every project's)."""
        ...

    async def set_alert_threshold(self, project_id: str, alert_id: str, threshold_amount: int) -> bool: ...

    async def delete_alert(self, project_id: str, alert_id: str) -> bool: ...

    async def fire_alert(self, alert: SpendAlertRow, month: int, announce: str) -> bool:
        """Mark the alert fired for ``month`` and announce the ``announce`` event to its project's webhook
        endpoints, in one transaction, if it has not fired for that month (True: this call fired it)."""
        ...

    async def audit_logs(
        self, wanted: AuditFilter, *, limit: int, after: str | None, before: str | None
    ) -> tuple[list[AuditRow], bool]:
        """Newest first."""
        ...
