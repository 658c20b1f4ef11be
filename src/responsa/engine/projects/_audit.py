"""The audit log: every admin action, written before its answer, and every use of a key outside its
permissions (a model or hosted tool its project leaves out, a spent limit, an admin route with a
project's key, an admin key outside the Admin API), written with the next look at the store (about
a second: a refused request costs no write of its own). Each entry is OpenAI's audit log object; the
refusals are responsa's own type, ``api_key.permission_denied``."""

from __future__ import annotations

import time
from collections.abc import Mapping
from typing import Any

import orjson

from responsa.protocol import new_id
from responsa.store import AuditRow, ProjectRepository

from ._caller import CALLER_KEY

__all__ = ["DENIED", "AuditTrail"]

DENIED = "api_key.permission_denied"


class AuditTrail:
    def __init__(self) -> None:
        self._store: ProjectRepository | None = None
        self._pending: list[AuditRow] = []

    def attach(self, store: ProjectRepository) -> None:
        self._store = store

    async def log(self, kind: str, resource_id: str, details: Mapping[str, Any], project_id: str | None) -> None:
        """An admin action, by the caller's key, written now."""
        if self._store is not None:
            await self._store.add_audit([_entry(kind, resource_id, details, project_id)])

    def denied(self, project_id: str | None, code: str, message: str) -> None:
        """A use of the caller's key outside its permissions, written with the next ``flush``."""
        key_id = CALLER_KEY.get()
        self._pending.append(_entry(DENIED, key_id or "", {"data": {"code": code, "message": message}}, project_id))

    async def flush(self) -> None:
        if self._store is None or not self._pending:
            return
        rows, self._pending = self._pending, []
        try:
            await self._store.add_audit(rows)
        except BaseException:
            self._pending[:0] = rows
            raise


def _entry(kind: str, resource_id: str, details: Mapping[str, Any], project_id: str | None) -> AuditRow:
    key_id, now, entry_id = CALLER_KEY.get(), int(time.time()), new_id("audit_log", "-")
    actor = {"type": "api_key", "api_key": {"id": key_id, "type": "service_account"}}
    scope = {"project": {"id": project_id}} if project_id else {}
    body = {"id": entry_id, "type": kind, "effective_at": now, "actor": actor, **scope,
            kind: {"id": resource_id, **details}}  # fmt: skip
    return AuditRow(entry_id, now, kind, project_id, key_id, resource_id, orjson.dumps(body).decode())
