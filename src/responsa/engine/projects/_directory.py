"""Who a bearer token speaks for, answered from memory on every request: the keys of the settings
(the keys file, ``--api-key``, ``--admin-key``) and the store's (made through the Admin API), each by
the SHA-256 of its secret, with each project's permissions.

The store's part is read again whenever the store's count of changes has moved: at once in the process
that made the change, and within ``poll`` seconds in every other worker and replica (the count is one
row, read each poll). When each key was last used is written back at most once a ``use_flush``
seconds per process (a write per request would cost every request a transaction)."""

from __future__ import annotations

import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import anyio
import orjson

from responsa.config import ApiKey
from responsa.protocol import HOSTED_TOOL_PERMISSIONS, PermissionDenied, RateLimited
from responsa.store import KeyRow, ProjectRepository, ProjectRow

from ._audit import AuditTrail
from ._caller import CALLER_KEY
from ._limit_table import LimitTable, RateLimits
from ._secrets import secret_hash

__all__ = ["KeyDirectory", "Principal", "ProjectPolicy"]


@dataclass(frozen=True, slots=True)
class Principal:
    """What a key may act as: a project's tenant, or (``tenant`` None) the organization's admin."""

    tenant: str | None
    key_id: str | None = None
    expires_at: int | None = None


ADMIN = Principal(None)


@dataclass(frozen=True, slots=True)
class ProjectPolicy:
    """A project's model and hosted-tool permissions (``allowed`` None: any model not ``denied``)."""

    project_id: str
    allowed: frozenset[str] | None = None
    denied: frozenset[str] = frozenset()
    disabled_tools: frozenset[str] = frozenset()
    spent_out: int | None = None
    """The spend limit (US cents) the project's spend this month has reached: every request is a 429."""

    def check(self, model: str | None, tool_types: Iterable[str] = ()) -> None:
        """429 where the project has spent its limit; 403 where it may not use ``model`` (None: the
        endpoint's default, which any project may use) or one of the hosted tools (by request tool type)."""
        if self.spent_out is not None:
            raise RateLimited(f"Project `{self.project_id}` has reached its monthly spend limit of "
                              f"${self.spent_out / 100:.2f}.", code="spend_limit_exceeded")  # fmt: skip
        if model is not None and (model in self.denied or (self.allowed is not None and model not in self.allowed)):
            raise PermissionDenied(f"Project `{self.project_id}` does not have access to model `{model}`",
                                   param="model", code="model_not_found")  # fmt: skip
        for index, tool_type in enumerate(tool_types):
            name = next((name for name in self.disabled_tools if tool_type.startswith(name)), None)
            if name is not None:
                raise PermissionDenied(
                    f"Project `{self.project_id}` may not use the hosted tool '{name}'.",
                    param=f"tools[{index}]",
                    code="hosted_tool_not_permitted",
                )


def spend_limit(project: ProjectRow) -> int | None:
    """A project's spend limit, in US cents (None: none)."""
    return None if project.spend_limit is None else int(orjson.loads(project.spend_limit)["threshold_amount"])


def model_limits(project: ProjectRow) -> dict[str, RateLimits]:
    """A project's rate limits per model, as its row keeps them (in the Admin API's names)."""
    stored = orjson.loads(project.rate_limits) if project.rate_limits else {}
    return {model: RateLimits(fields.get("max_requests_per_1_minute", 0), fields.get("max_tokens_per_1_minute", 0),
                              fields.get("max_requests_per_1_day", 0)) for model, fields in stored.items()}  # fmt: skip


def policy_of(project: ProjectRow, spent_out: bool = False) -> ProjectPolicy | None:
    """What a project's stored permissions allow, and whether it has spent its limit (None: everything)."""
    limit = spend_limit(project) if spent_out else None
    if project.model_permissions is None and project.tool_permissions is None and limit is None:
        return None
    models = orjson.loads(project.model_permissions) if project.model_permissions else {}
    ids = frozenset(models.get("model_ids", ()))
    tools = orjson.loads(project.tool_permissions) if project.tool_permissions else {}
    disabled = frozenset(name for name in HOSTED_TOOL_PERMISSIONS if tools.get(name) is False)
    allow = models.get("mode") == "allow_list"
    return ProjectPolicy(project.id, ids if allow else None, frozenset() if allow else ids, disabled, limit)


class KeyDirectory:
    """The keys this process honours, by the hash of their secret, and the projects' policies."""

    def __init__(
        self, keys: Sequence[ApiKey] = (), admin_key: str | None = None, limits: LimitTable | None = None
    ) -> None:
        self.limits = limits if limits is not None else LimitTable(keys)
        """The rate limits the limiter holds requests to: the projects' per model are written here."""
        self._fixed = {secret_hash(key.key): Principal(key.tenant) for key in keys}
        if admin_key:
            self._fixed[secret_hash(admin_key)] = ADMIN
        self._keys = dict(self._fixed)
        self._policies: dict[str, ProjectPolicy] = {}
        self._projects: list[ProjectRow] = []
        self._spent_out: frozenset[str] = frozenset()
        """The projects whose spend this month has reached their limit (``spent``, by the spend watch)."""
        self._store: ProjectRepository | None = None
        self.audit = AuditTrail()
        """Admin actions and refused uses of keys (written through this directory's store)."""
        self._seen = -1
        self._reading = anyio.Lock()
        """One read of the store at a time: a poll's read, older, never lands after an admin change's."""
        self._used: dict[str, int] = {}
        self._flushed = time.monotonic()

    @property
    def required(self) -> bool:
        """Whether a request needs a key (any key is known: a server with none is open, as before)."""
        return bool(self._keys)

    @property
    def has_admin(self) -> bool:
        """Whether an admin key is known (the Admin API is off without one)."""
        return any(principal.tenant is None for principal in self._keys.values())

    def resolve(self, token: bytes) -> Principal | None:
        """The principal of a bearer token; None for an unknown or expired key."""
        principal = self._keys.get(secret_hash(token))
        if principal is None:
            return None
        now = int(time.time())
        if principal.expires_at is not None and principal.expires_at <= now:
            return None
        if principal.key_id is not None:
            self._used[principal.key_id] = now
        CALLER_KEY.set(principal.key_id)
        return principal

    async def attach(self, store: ProjectRepository) -> None:
        """Read the store's keys and projects now, and from now on whenever they change."""
        self._store = store
        self.audit.attach(store)
        await self.refresh()

    async def refresh(self, force: bool = False) -> None:
        """Read the keys and projects again if the store's count of changes has moved (or ``force``).
        The keys first: a key found was made before the projects are read, so whatever its project
        held when the key was made (its limits, say) is read with it."""
        if self._store is None:
            return
        async with self._reading:
            changes = await self._store.changes()
            if changes == self._seen and not force:
                return
            keys = await self._store.all_keys()
            projects = await self._store.all_projects()
            self._load(projects, keys)
            self._seen = changes

    def _load(self, projects: list[ProjectRow], keys: list[KeyRow]) -> None:
        archived = {project.id for project in projects if project.archived_at is not None}
        loaded = dict(self._fixed)
        for key in keys:
            if key.project_id in archived:
                continue  # an archived project's keys no longer work
            loaded[key.secret_hash] = Principal(key.project_id, key.id, key.expires_at)  # the file's too, by id
        self._keys = loaded
        self._projects = projects
        self.limits.models = {(project.id, model): limits for project in projects if project.rate_limits
                              for model, limits in model_limits(project).items()}  # fmt: skip
        self._made_policies()

    def _made_policies(self) -> None:
        self._policies = {project.id: policy for project in self._projects
                          if (policy := policy_of(project, project.id in self._spent_out)) is not None}  # fmt: skip

    def spend_limits(self) -> dict[str, int]:
        """The projects with a spend limit, with it (US cents)."""
        return {project.id: limit for project in self._projects if (limit := spend_limit(project)) is not None}

    def spent(self, projects: frozenset[str]) -> None:
        """These projects have reached their spend limit this month (and no others): their requests are
        429s until it is raised or removed, or the month ends."""
        if projects != self._spent_out:
            self._spent_out = projects
            self._made_policies()

    def spent_out(self, project_id: str) -> bool:
        return project_id in self._spent_out

    async def flush_uses(self, every: float = 0.0) -> None:
        """Write when keys were last used, if ``every`` seconds have passed since the last write."""
        if self._store is None or not self._used or time.monotonic() - self._flushed < every:
            return
        used, self._used = self._used, {}
        self._flushed = time.monotonic()
        try:
            await self._store.record_use(used)
        except BaseException:
            self._used = {**used, **self._used}  # written with the next flush (a later use wins)
            raise

    async def poll(self, use_flush: float) -> None:
        """One look: the store's changes, the refusals to log and the uses to write back
        (``engine._periodic.every`` runs it)."""
        await self.refresh()
        await self.audit.flush()
        await self.flush_uses(use_flush)

    def check(self, tenant: str, model: str | None, tool_types: Iterable[str] = ()) -> None:
        """429 where the tenant's project has spent its limit, 403 where it may not use ``model`` or a
        hosted tool (see ``ProjectPolicy.check``); a refusal is logged (as the caller's key's)."""
        policy = self._policies.get(tenant)
        if policy is None:
            return
        try:
            policy.check(model, tool_types)
        except (PermissionDenied, RateLimited) as refused:
            self.audit.denied(tenant, refused.code or "", refused.message)
            raise
