"""Skill queries of the SQL store: a tenant's skills and their versions (each version's files one zip)."""

from __future__ import annotations

import time
from typing import Any

from sqlalchemy import delete, func, insert, select, update

from .._base import Order
from .._skill_repository import SkillRow, SkillVersionRow
from ._database import Database, Sql
from ._paging import keyed_page
from ._tables import skill_versions, skills

__all__ = ["SqlSkills"]

_s, _v = skills.c, skill_versions.c
_SKILL = (_s.id, _s.name, _s.description, _s.default_version, _s.latest_version, _s.created_at)
_VERSION = (_v.skill_id, _v.version, _v.id, _v.name, _v.description, _v.created_at)


class SqlSkills:
    def __init__(self, db: Database, tenant: str) -> None:
        self._db = db
        self.tenant = tenant

    def scoped(self, tenant: str) -> SqlSkills:
        return SqlSkills(self._db, tenant)

    def _owned(self, skill_id: str) -> Any:
        return (_s.id == skill_id) & (_s.tenant == self.tenant)

    async def create_skill(self, skill: SkillRow, version: SkillVersionRow, bundle: bytes) -> None:
        def work(conn: Sql) -> None:
            conn.execute(insert(skills), [{**skill.__dict__, "tenant": self.tenant}])
            conn.execute(insert(skill_versions), [{**version.__dict__, "bundle": bundle}])

        await self._db.write(work)

    async def get_skill(self, skill_id: str) -> SkillRow | None:
        query = select(*_SKILL).where(self._owned(skill_id))
        row = await self._db.read(lambda conn: conn.execute(query).first())
        return None if row is None else SkillRow(*row)

    async def list_skills(self, *, limit: int, order: Order, after: str | None) -> tuple[list[SkillRow], bool]:
        query = keyed_page(select(*_SKILL).where(_s.tenant == self.tenant), _s.id, limit=limit, order=order,
                           after=after, before=None)  # fmt: skip
        rows = await self._db.read(lambda conn: conn.execute(query).all())
        return [SkillRow(*row) for row in rows[:limit]], len(rows) > limit

    async def set_default_version(self, skill_id: str, version: int) -> SkillRow | None:
        known = select(_v.version).where(_v.skill_id == skill_id, _v.version == version)

        def work(conn: Sql) -> SkillRow | None:
            if conn.execute(known).first() is None:
                return None
            conn.execute(update(skills).where(self._owned(skill_id)).values(default_version=version))
            row = conn.execute(select(*_SKILL).where(self._owned(skill_id))).first()
            return None if row is None else SkillRow(*row)

        return await self._db.write(work)

    async def delete_skill(self, skill_id: str) -> bool:
        def work(conn: Sql) -> bool:
            if not conn.execute(delete(skills).where(self._owned(skill_id))).rowcount:
                return False
            conn.execute(delete(skill_versions).where(_v.skill_id == skill_id))
            return True

        return await self._db.write(work)

    async def add_version(
        self, skill_id: str, version_id: str, name: str, description: str, bundle: bytes, default: bool
    ) -> SkillVersionRow | None:
        def work(conn: Sql) -> SkillVersionRow | None:
            latest = conn.execute(select(_s.latest_version, _s.created_at).where(self._owned(skill_id))).first()
            if latest is None:
                return None
            number = int(latest[0]) + 1
            row = SkillVersionRow(skill_id, number, version_id, name, description, int(time.time()))
            conn.execute(insert(skill_versions), [{**row.__dict__, "bundle": bundle}])
            changes: dict[str, Any] = {"latest_version": number, **({"default_version": number} if default else {})}
            conn.execute(update(skills).where(self._owned(skill_id)).values(**changes))
            return row

        return await self._db.write(work)

    async def get_version(self, skill_id: str, version: int) -> SkillVersionRow | None:
        query = select(*_VERSION).join(skills, _s.id == _v.skill_id).where(self._owned(skill_id), _v.version == version)
        row = await self._db.read(lambda conn: conn.execute(query).first())
        return None if row is None else SkillVersionRow(*row)

    async def list_versions(
        self, skill_id: str, *, limit: int, order: Order, after: str | None
    ) -> tuple[list[SkillVersionRow], bool]:
        owned = select(*_VERSION).join(skills, _s.id == _v.skill_id).where(self._owned(skill_id))

        def work(conn: Sql) -> list[Any]:
            query = owned
            if after is not None:
                at = conn.execute(select(_v.version).where(_v.skill_id == skill_id, _v.id == after)).scalar()
                if at is not None:
                    query = query.where(_v.version > at if order == "asc" else _v.version < at)
            ordering = _v.version.asc() if order == "asc" else _v.version.desc()
            return list(conn.execute(query.order_by(ordering).limit(limit + 1)).all())

        rows = await self._db.read(work)
        return [SkillVersionRow(*row) for row in rows[:limit]], len(rows) > limit

    async def delete_version(self, skill_id: str, version: int) -> bool:
        def work(conn: Sql) -> bool:
            skill = conn.execute(select(_s.default_version).where(self._owned(skill_id))).first()
            if skill is None or skill[0] == version:
                return False
            gone = delete(skill_versions).where(_v.skill_id == skill_id, _v.version == version)
            if not conn.execute(gone).rowcount:
                return False
            newest = conn.execute(select(func.max(_v.version)).where(_v.skill_id == skill_id)).scalar()
            conn.execute(update(skills).where(self._owned(skill_id)).values(latest_version=newest))
            return True

        return await self._db.write(work)

    async def bundle(self, skill_id: str, version: int) -> bytes | None:
        query = select(_v.bundle).join(skills, _s.id == _v.skill_id).where(self._owned(skill_id), _v.version == version)
        data = await self._db.read(lambda conn: conn.execute(query).scalar())
        return None if data is None else bytes(data)
