"""A project's spend limit (its requests are 429s past it, see ``usage.SpendWatch``) and spend alerts
(an event to its webhook endpoints once a month when its spend passes a threshold), through the Admin
API. No mail is sent from here: an alert's channel is ``{"type": "webhook"}``."""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable
from typing import Any

import orjson

from responsa.protocol import (
    CreateSpendAlertRequest,
    InvalidRequest,
    NotFound,
    SpendAlertObject,
    SpendLimitObject,
    UpdateSpendAlertRequest,
    UpdateSpendLimitRequest,
    new_id,
)
from responsa.store import ProjectRepository, ProjectRow, SpendAlertRow

from ._directory import KeyDirectory

__all__ = ["SPEND_ALERT_EVENT", "ProjectSpending"]

SPEND_ALERT_EVENT = "project.spend_alert.triggered"

Lookup = Callable[..., Awaitable[ProjectRow]]
"""The project by id (``changing=True``: one the Admin API may change), or a 404 / 400."""
Changed = Callable[..., Awaitable[None]]
"""Logs a change (an audit log type, resource, project, details) and reads it back into the directory."""


def _alert_object(row: SpendAlertRow) -> SpendAlertObject:
    return SpendAlertObject(id=row.id, threshold_amount=row.threshold_amount)


def _webhook_channel(channel: Any) -> None:
    if channel is not None and channel.type != "webhook":
        raise InvalidRequest(f"No mail is sent from here: a spend alert's channel is {{\"type\": \"webhook\"}} (an "
                             f"event to the project's webhook endpoints), not {channel.type!r}.",
                             param="notification_channel.type", code="unsupported_value")  # fmt: skip


class ProjectSpending:
    def __init__(self, store: ProjectRepository, directory: KeyDirectory, project: Lookup, changed: Changed) -> None:
        self._store = store
        self._directory = directory
        self._project = project
        self._changed = changed

    async def limit(self, project_id: str) -> SpendLimitObject:
        row = await self._project(project_id)
        if row.spend_limit is None:
            raise NotFound(f"Project '{project_id}' has no spend limit.", param="project_id")
        status = "enforcing" if self._directory.spent_out(project_id) else "inactive"
        return SpendLimitObject(**orjson.loads(row.spend_limit), enforcement={"status": status})

    async def set_limit(self, project_id: str, request: UpdateSpendLimitRequest) -> SpendLimitObject:
        row = await self._project(project_id, changing=True)
        stored = orjson.dumps(request.model_dump(include={"threshold_amount", "currency", "interval"})).decode()
        await self._store.update_project(ProjectRow(**{**row.__dict__, "spend_limit": stored}))
        await self._changed("project.updated", row.id, row.id, changes_requested={"spend_limit": orjson.loads(stored)})
        return await self.limit(project_id)

    async def delete_limit(self, project_id: str) -> None:
        row = await self._project(project_id, changing=True)
        if row.spend_limit is None:
            raise NotFound(f"Project '{project_id}' has no spend limit.", param="project_id")
        await self._store.update_project(ProjectRow(**{**row.__dict__, "spend_limit": None}))
        await self._changed("project.updated", row.id, row.id, changes_requested={"spend_limit": None})

    async def _changed_alert(self, project_id: str, alert: dict[str, Any]) -> None:
        await self._changed("project.updated", project_id, project_id, changes_requested={"spend_alert": alert})

    async def create_alert(self, project_id: str, request: CreateSpendAlertRequest) -> SpendAlertObject:
        await self._project(project_id, changing=True)
        _webhook_channel(request.notification_channel)
        row = SpendAlertRow(new_id("spend_alert"), project_id, request.threshold_amount, int(time.time()))
        await self._store.create_alert(row)
        await self._changed_alert(project_id, {"id": row.id, "threshold_amount": row.threshold_amount})
        return _alert_object(row)

    async def _alert(self, project_id: str, alert_id: str) -> SpendAlertRow:
        await self._project(project_id)
        row = await self._store.get_alert(project_id, alert_id)
        if row is None:
            raise NotFound(f"No spend alert found with id '{alert_id}'.", param="alert_id")
        return row

    async def alert(self, project_id: str, alert_id: str) -> SpendAlertObject:
        return _alert_object(await self._alert(project_id, alert_id))

    async def alerts(self, project_id: str) -> list[SpendAlertObject]:
        await self._project(project_id)
        return [_alert_object(row) for row in await self._store.list_alerts(project_id)]

    async def update_alert(self, project_id: str, alert_id: str, request: UpdateSpendAlertRequest) -> SpendAlertObject:
        await self._project(project_id, changing=True)
        row = await self._alert(project_id, alert_id)
        _webhook_channel(request.notification_channel)
        if request.threshold_amount is not None:
            await self._store.set_alert_threshold(project_id, alert_id, request.threshold_amount)
            row = SpendAlertRow(**{**row.__dict__, "threshold_amount": request.threshold_amount, "fired_for": None})
            await self._changed_alert(project_id, {"id": alert_id, "threshold_amount": row.threshold_amount})
        return _alert_object(row)

    async def delete_alert(self, project_id: str, alert_id: str) -> None:
        await self._project(project_id, changing=True)
        if not await self._store.delete_alert(project_id, alert_id):
            raise NotFound(f"No spend alert found with id '{alert_id}'.", param="alert_id")
        await self._changed(
            "project.updated",
            project_id,
            project_id,
            changes_requested={"spend_alert": {"id": alert_id, "deleted": True}},
        )
