"""Project queries of the SQL store: projects, service accounts and API keys (see
``store/_project_repository.py``). Every write that changes who may do what counts a change in the same
transaction, so a process that reads the count knows whether the keys it holds are still the store's."""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any

from sqlalchemy import ColumnElement, Table, delete, insert, select, update
from sqlalchemy.dialects import postgresql

from .._base import Order
from .._project_repository import AuditFilter, AuditRow, KeyRow, ProjectRow, ServiceAccountRow, SpendAlertRow
from ._database import Database, Sql
from ._paging import keyed_page
from ._project_tables import api_keys, audit_logs, project_changes, projects, service_accounts, spend_alerts
from ._webhooks import announce as announced

__all__ = ["SqlProjects"]

_p, _a, _k, _l = projects.c, service_accounts.c, api_keys.c, audit_logs.c
_PROJECT = (_p.id, _p.name, _p.created_at, _p.archived_at, _p.source, _p.model_permissions, _p.tool_permissions,
            _p.spend_limit, _p.rate_limits)  # fmt: skip
_ACCOUNT = (_a.id, _a.project_id, _a.name, _a.role, _a.created_at)
_KEY = (_k.id, _k.secret_hash, _k.name, _k.redacted_value, _k.created_at, _k.project_id, _k.service_account_id,
        _k.expires_at, _k.last_used_at)  # fmt: skip
_INSERT_PROJECT_IF_NEW = postgresql.insert(projects).on_conflict_do_nothing()
"""``INSERT … ON CONFLICT DO NOTHING``, which SQLite reads as PostgreSQL does (as conversations' does)."""
_INSERT_KEY_IF_NEW = postgresql.insert(api_keys).on_conflict_do_nothing()
_s = spend_alerts.c
_ALERT = (_s.id, _s.project_id, _s.threshold_amount, _s.created_at, _s.fired_for)
_AUDIT = (_l.id, _l.effective_at, _l.type, _l.project_id, _l.actor_id, _l.resource_id, _l.body)
_CHANGES = select(project_changes.c.changes).where(project_changes.c.id == 1)
_COUNT_CHANGE = update(project_changes).where(project_changes.c.id == 1).values(changes=project_changes.c.changes + 1)


def _row(value: Any) -> dict[str, Any]:
    return dict(value.__dict__)


def _insert(conn: Sql, table: Table, value: Any) -> None:
    conn.execute(insert(table), [_row(value)])


def _key_of(project_id: str | None) -> ColumnElement[bool]:
    return _k.project_id.is_(None) if project_id is None else _k.project_id == project_id


class SqlProjects:
    def __init__(self, db: Database) -> None:
        self._db = db

    async def _changing(self, work: Any) -> Any:
        """``work`` in a write transaction that also counts a change (when it changed something)."""

        def counted(conn: Sql) -> Any:
            result = work(conn)
            if result is not False:
                conn.execute(_COUNT_CHANGE)
            return result

        counted.__qualname__ = work.__qualname__  # a traced write is named after the method that asked for it
        return await self._db.write(counted)

    async def changes(self) -> int:
        return int(await self._db.read(lambda conn: conn.execute(_CHANGES).scalar_one()))

    async def put_project(self, project: ProjectRow) -> None:
        kept = {"name": project.name, "source": project.source}  # its creation time and permissions stay

        def work(conn: Sql) -> None:
            conn.execute(_INSERT_PROJECT_IF_NEW, [_row(project)])  # workers starting at once: one inserts
            conn.execute(update(projects).where(_p.id == project.id).values(**kept))

        await self._changing(work)

    async def create_project(self, project: ProjectRow) -> None:
        await self._changing(lambda conn: _insert(conn, projects, project))

    async def get_project(self, project_id: str) -> ProjectRow | None:
        row = await self._db.read(lambda conn: conn.execute(select(*_PROJECT).where(_p.id == project_id)).first())
        return None if row is None else ProjectRow(*row)

    async def list_projects(self, *, limit: int, after: str | None, archived: bool) -> tuple[list[ProjectRow], bool]:
        query = select(*_PROJECT) if archived else select(*_PROJECT).where(_p.archived_at.is_(None))
        paged = keyed_page(query, _p.id, limit=limit, order="asc", after=after, before=None)
        rows = await self._db.read(lambda conn: conn.execute(paged).all())
        return [ProjectRow(*row) for row in rows[:limit]], len(rows) > limit

    async def update_project(self, project: ProjectRow) -> bool:
        statement = update(projects).where(_p.id == project.id).values(**_row(project))
        return bool(await self._changing(lambda conn: conn.execute(statement).rowcount > 0))

    async def all_projects(self) -> list[ProjectRow]:
        rows = await self._db.read(lambda conn: conn.execute(select(*_PROJECT)).all())
        return [ProjectRow(*row) for row in rows]

    async def create_service_account(self, account: ServiceAccountRow, key: KeyRow | None) -> None:
        def work(conn: Sql) -> None:
            _insert(conn, service_accounts, account)
            if key is not None:
                _insert(conn, api_keys, key)

        await self._changing(work)

    async def get_service_account(self, project_id: str, account_id: str) -> ServiceAccountRow | None:
        query = select(*_ACCOUNT).where(_a.project_id == project_id, _a.id == account_id)
        row = await self._db.read(lambda conn: conn.execute(query).first())
        return None if row is None else ServiceAccountRow(*row)

    async def get_service_accounts(self, ids: list[str]) -> list[ServiceAccountRow]:
        if not ids:
            return []
        rows = await self._db.read(lambda conn: conn.execute(select(*_ACCOUNT).where(_a.id.in_(ids))).all())
        return [ServiceAccountRow(*row) for row in rows]

    async def list_service_accounts(
        self, project_id: str, *, limit: int, after: str | None
    ) -> tuple[list[ServiceAccountRow], bool]:
        query = keyed_page(select(*_ACCOUNT).where(_a.project_id == project_id), _a.id, limit=limit, order="asc",
                           after=after, before=None)  # fmt: skip
        rows = await self._db.read(lambda conn: conn.execute(query).all())
        return [ServiceAccountRow(*row) for row in rows[:limit]], len(rows) > limit

    async def update_service_account(self, account: ServiceAccountRow) -> bool:
        where = (_a.project_id == account.project_id) & (_a.id == account.id)
        statement = update(service_accounts).where(where).values(**_row(account))
        return bool(await self._changing(lambda conn: conn.execute(statement).rowcount > 0))

    async def delete_service_account(self, project_id: str, account_id: str) -> bool:
        def work(conn: Sql) -> bool:
            where = (_a.project_id == project_id) & (_a.id == account_id)
            if not conn.execute(delete(service_accounts).where(where)).rowcount:
                return False
            conn.execute(delete(api_keys).where(_k.service_account_id == account_id))
            return True

        return bool(await self._changing(work))

    async def create_key(self, key: KeyRow) -> None:
        await self._changing(lambda conn: _insert(conn, api_keys, key))

    async def put_key(self, key: KeyRow) -> None:
        def work(conn: Sql) -> None:
            # The keys file's key of a tenant may have changed: the old secret goes with its row.
            conn.execute(delete(api_keys).where((_k.id == key.id) | (_k.secret_hash == key.secret_hash)))
            conn.execute(_INSERT_KEY_IF_NEW, [_row(key)])

        await self._changing(work)

    async def get_key(self, project_id: str | None, key_id: str) -> KeyRow | None:
        query = select(*_KEY).where(_key_of(project_id), _k.id == key_id)
        row = await self._db.read(lambda conn: conn.execute(query).first())
        return None if row is None else KeyRow(*row)

    async def list_keys(
        self, project_id: str | None, *, limit: int, order: Order, after: str | None
    ) -> tuple[list[KeyRow], bool]:
        query = keyed_page(select(*_KEY).where(_key_of(project_id)), _k.id, limit=limit, order=order, after=after,
                           before=None)  # fmt: skip
        rows = await self._db.read(lambda conn: conn.execute(query).all())
        return [KeyRow(*row) for row in rows[:limit]], len(rows) > limit

    async def set_expiry(self, key_id: str, expires_at: int | None) -> None:
        statement = update(api_keys).where(_k.id == key_id).values(expires_at=expires_at)
        await self._changing(lambda conn: conn.execute(statement).rowcount > 0)

    async def delete_key(self, project_id: str | None, key_id: str) -> bool:
        statement = delete(api_keys).where(_key_of(project_id), _k.id == key_id)
        return bool(await self._changing(lambda conn: conn.execute(statement).rowcount > 0))

    async def delete_keys_except(self, source_ids: list[str], prefix: str) -> None:
        statement = delete(api_keys).where(_k.id.startswith(prefix, autoescape=True), _k.id.not_in(source_ids))
        await self._changing(lambda conn: conn.execute(statement).rowcount > 0)

    async def all_keys(self) -> list[KeyRow]:
        rows = await self._db.read(lambda conn: conn.execute(select(*_KEY)).all())
        return [KeyRow(*row) for row in rows]

    async def add_audit(self, rows: Sequence[AuditRow]) -> None:
        if rows:
            values = [dict(row.__dict__) for row in rows]
            await self._db.write(lambda conn: conn.execute(insert(audit_logs), values))

    async def audit_logs(
        self, wanted: AuditFilter, *, limit: int, after: str | None, before: str | None
    ) -> tuple[list[AuditRow], bool]:
        query = select(*_AUDIT)
        for column, values in ((_l.type, wanted.types), (_l.project_id, wanted.project_ids),
                               (_l.actor_id, wanted.actor_ids), (_l.resource_id, wanted.resource_ids)):  # fmt: skip
            if values:
                query = query.where(column.in_(list(values)))
        if wanted.since is not None:
            query = query.where(_l.effective_at >= wanted.since)
        if wanted.until is not None:
            query = query.where(_l.effective_at < wanted.until)
        paged = keyed_page(query, _l.id, limit=limit, order="desc", after=after, before=before)
        rows = await self._db.read(lambda conn: conn.execute(paged).all())
        return [AuditRow(*row) for row in rows[:limit]], len(rows) > limit

    async def create_alert(self, alert: SpendAlertRow) -> None:
        await self._db.write(lambda conn: _insert(conn, spend_alerts, alert))

    async def get_alert(self, project_id: str, alert_id: str) -> SpendAlertRow | None:
        query = select(*_ALERT).where(_s.project_id == project_id, _s.id == alert_id)
        row = await self._db.read(lambda conn: conn.execute(query).first())
        return None if row is None else SpendAlertRow(*row)

    async def list_alerts(self, project_id: str | None) -> list[SpendAlertRow]:
        query = select(*_ALERT).order_by(_s.id)
        if project_id is not None:
            query = query.where(_s.project_id == project_id)
        return [SpendAlertRow(*row) for row in await self._db.read(lambda conn: conn.execute(query).all())]

    async def set_alert_threshold(self, project_id: str, alert_id: str, threshold_amount: int) -> bool:
        statement = update(spend_alerts).where(_s.project_id == project_id, _s.id == alert_id).values(
            threshold_amount=threshold_amount, fired_for=None)  # a new threshold may fire again this month  # fmt: skip
        return bool(await self._db.write(lambda conn: conn.execute(statement).rowcount > 0))

    async def delete_alert(self, project_id: str, alert_id: str) -> bool:
        statement = delete(spend_alerts).where(_s.project_id == project_id, _s.id == alert_id)
        return bool(await self._db.write(lambda conn: conn.execute(statement).rowcount > 0))

    async def fire_alert(self, alert: SpendAlertRow, month: int, announce: str) -> bool:
        not_yet = (_s.fired_for.is_(None)) | (_s.fired_for < month)
        statement = update(spend_alerts).where(_s.id == alert.id, not_yet).values(fired_for=month)

        def work(conn: Sql) -> bool:
            if not conn.execute(statement).rowcount:
                return False  # another process fired it this month
            announced(conn, alert.project_id, announce, alert.id, int(time.time()))
            return True

        return bool(await self._db.write(work))

    async def record_use(self, used: dict[str, int]) -> None:
        def work(conn: Sql) -> None:
            for key_id, when in used.items():
                conn.execute(update(api_keys).where(_k.id == key_id).values(last_used_at=when))

        await self._db.write(work)
