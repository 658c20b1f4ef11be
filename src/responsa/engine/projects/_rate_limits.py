"""A project's rate limits per model (``/organization/projects/{id}/rate_limits``), through the Admin
API: each served model is listed with the project's limits for it (0: none of its own); a change is
written on the project's row, and the key directory puts it in the limit table every limiter reads."""

from __future__ import annotations

from collections.abc import Sequence

import orjson

from responsa.protocol import NotFound, RateLimitObject, UpdateRateLimitRequest
from responsa.store import ProjectRepository, ProjectRow

from ._spending import Changed, Lookup

__all__ = ["ProjectRateLimits"]

_PREFIX = "rl-"
_COUNTED = ("max_requests_per_1_minute", "max_tokens_per_1_minute", "max_requests_per_1_day")
"""The limits counted here (the names the row keeps them by)."""


def _stored(row: ProjectRow) -> dict[str, dict[str, int]]:
    found: dict[str, dict[str, int]] = orjson.loads(row.rate_limits) if row.rate_limits else {}
    return found


def _limit_object(model: str, limits: dict[str, int]) -> RateLimitObject:
    return RateLimitObject(id=_PREFIX + model, model=model, **limits)


class ProjectRateLimits:
    def __init__(self, store: ProjectRepository, project: Lookup, changed: Changed) -> None:
        self._store = store
        self._project = project
        self._changed = changed

    async def list(self, project_id: str, served: Sequence[str]) -> list[RateLimitObject]:
        """Every served model's limits, then those of models no longer served."""
        stored = _stored(await self._project(project_id))
        models = list(dict.fromkeys([*served, *stored]))
        return [_limit_object(model, stored.get(model, {})) for model in models]

    async def update(
        self, project_id: str, rate_limit_id: str, request: UpdateRateLimitRequest, served: Sequence[str]
    ) -> RateLimitObject:
        """Set the limits the request names (0 removes one); a model not served nor limited is a 404."""
        row = await self._project(project_id, changing=True)
        stored = _stored(row)
        model = rate_limit_id.removeprefix(_PREFIX)
        if not rate_limit_id.startswith(_PREFIX) or (model not in served and model not in stored):
            raise NotFound(f"No rate limit '{rate_limit_id}' in project '{project_id}'.", param="rate_limit_id")
        asked = request.model_dump(include=set(_COUNTED), exclude_none=True)
        limits = {**stored.get(model, {}), **asked}
        limits = {name: value for name, value in limits.items() if value}
        stored = {**stored, model: limits} if limits else {name: kept for name, kept in stored.items() if name != model}
        kept = orjson.dumps(stored).decode() if stored else None
        await self._store.update_project(ProjectRow(**{**row.__dict__, "rate_limits": kept}))
        await self._changed("rate_limit.updated", rate_limit_id, row.id, changes_requested=asked)
        return _limit_object(model, limits)
