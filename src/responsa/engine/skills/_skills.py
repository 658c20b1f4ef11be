"""The skills service (``/v1/skills``): a tenant's skills, each a folder of files with a ``SKILL.md``,
versioned (numbers from 1; a default version the API and a ``skill_reference`` without a version use,
and the latest), each version's files one zip in the store; and the skills a container mounts."""

from __future__ import annotations

import base64
import binascii
import time
from collections.abc import Sequence

from responsa.protocol import (
    ContainerSkill,
    InlineSkill,
    InvalidRequest,
    NotFound,
    SkillObject,
    SkillVersionObject,
    new_id,
)
from responsa.store import Order, SkillRepository, SkillRow, SkillVersionRow

from .._tenant_views import tenant_view
from ._bundle import MAX_BUNDLE_BYTES, Bundle, check_name, read_bundle

__all__ = ["SkillService", "skill_object", "version_object"]


def skill_object(row: SkillRow) -> SkillObject:
    return SkillObject(id=row.id, created_at=row.created_at, name=row.name, description=row.description,
                       default_version=str(row.default_version), latest_version=str(row.latest_version))  # fmt: skip


def version_object(row: SkillVersionRow) -> SkillVersionObject:
    return SkillVersionObject(id=row.id, created_at=row.created_at, skill_id=row.skill_id, version=str(row.version),
                              name=row.name, description=row.description)  # fmt: skip


def _no_skill(skill_id: str, param: str = "skill_id") -> NotFound:
    return NotFound(f"No skill found with id '{skill_id}'.", param=param)


def _no_version(skill_id: str, version: str, param: str = "version") -> NotFound:
    return NotFound(f"Skill '{skill_id}' has no version '{version}'.", param=param)


class SkillService:
    """Skills of one tenant (``for_tenant``)."""

    def __init__(self, store: SkillRepository) -> None:
        self._store = store
        self._views: dict[str, SkillService] = {}

    def for_tenant(self, tenant: str) -> SkillService:
        return tenant_view(self._views, tenant, lambda name: SkillService(self._store.scoped(name)))

    async def create(self, uploaded: Sequence[tuple[str, bytes]]) -> SkillObject:
        """A new skill from its files (a folder's, or one zip), at version 1."""
        bundle = read_bundle(uploaded)
        now = int(time.time())
        row = SkillRow(new_id("skill"), bundle.name, bundle.description, 1, 1, now)
        version = SkillVersionRow(row.id, 1, new_id("skillver"), bundle.name, bundle.description, now)
        await self._store.create_skill(row, version, bundle.archive)
        return skill_object(row)

    async def get(self, skill_id: str) -> SkillObject:
        return skill_object(await self._row(skill_id))

    async def _row(self, skill_id: str, param: str = "skill_id") -> SkillRow:
        row = await self._store.get_skill(skill_id)
        if row is None:
            raise _no_skill(skill_id, param)
        return row

    async def page(self, *, limit: int, order: Order, after: str | None) -> tuple[list[SkillObject], bool]:
        rows, more = await self._store.list_skills(limit=limit, order=order, after=after)
        return [skill_object(row) for row in rows], more

    async def set_default(self, skill_id: str, version: str) -> SkillObject:
        row = await self._store.set_default_version(skill_id, _number(version, "default_version"))
        if row is None:
            await self._row(skill_id)
            raise _no_version(skill_id, version, "default_version")
        return skill_object(row)

    async def delete(self, skill_id: str) -> None:
        if not await self._store.delete_skill(skill_id):
            raise _no_skill(skill_id)

    async def add_version(
        self, skill_id: str, uploaded: Sequence[tuple[str, bytes]], default: bool
    ) -> SkillVersionObject:
        """The skill's next version from its files; the default too where ``default`` asks."""
        await self._row(skill_id)
        bundle = read_bundle(uploaded)
        row = await self._store.add_version(skill_id, new_id("skillver"), bundle.name, bundle.description,
                                            bundle.archive, default)  # fmt: skip
        if row is None:
            raise _no_skill(skill_id)
        return version_object(row)

    async def version(self, skill_id: str, version: str) -> SkillVersionObject:
        return version_object(await self._version_row(skill_id, version))

    async def _version_row(self, skill_id: str, version: str | int | None, param: str = "version") -> SkillVersionRow:
        """A version by number, ``latest``, or (None) the default."""
        skill = await self._row(skill_id, "skill_id" if param == "version" else param)
        number = (skill.default_version if version is None else skill.latest_version if version == "latest"
                  else _number(str(version), param))  # fmt: skip
        row = await self._store.get_version(skill_id, number)
        if row is None:
            raise _no_version(skill_id, str(version), param)
        return row

    async def versions(
        self, skill_id: str, *, limit: int, order: Order, after: str | None
    ) -> tuple[list[SkillVersionObject], bool]:
        await self._row(skill_id)
        rows, more = await self._store.list_versions(skill_id, limit=limit, order=order, after=after)
        return [version_object(row) for row in rows], more

    async def delete_version(self, skill_id: str, version: str) -> str:
        """Remove a version that is not the default; its id."""
        skill = await self._row(skill_id)
        number = _number(version, "version")
        if number == skill.default_version:
            raise InvalidRequest("The default version cannot be deleted: make another version the default first.",
                                 param="version", code="invalid_value")  # fmt: skip
        row = await self._store.get_version(skill_id, number)
        if row is None or not await self._store.delete_version(skill_id, number):
            raise _no_version(skill_id, version)
        return row.id

    async def content(self, skill_id: str, version: str | None = None) -> tuple[str, bytes]:
        """A version's files as a zip (the default version's where none is named), and its file name."""
        bundle = await self._stored(skill_id, version, "version")
        return f"{bundle.name}.zip", bundle.archive

    async def _stored(
        self, skill_id: str, version: str | int | None, param: str, version_param: str = "version"
    ) -> Bundle:
        """A stored version (by number, ``latest``, or the default) with its files' zip; ``param`` and
        ``version_param`` name the request's fields in a 404."""
        row = await self._version_row(skill_id, version, param)
        data = await self._store.bundle(skill_id, row.version)
        if data is None:  # deleted meanwhile
            raise _no_version(skill_id, str(version), version_param)
        return Bundle(row.name, row.description, data)

    async def mounted(self, skills: Sequence[ContainerSkill], param: str) -> list[Bundle]:
        """The skills a container mounts, each checked (404 for a skill or version the tenant lacks; 400
        for an inline zip that is not a skill)."""
        bundles: list[Bundle] = []
        for index, skill in enumerate(skills):
            where = f"{param}[{index}]"
            if isinstance(skill, InlineSkill):
                bundles.append(_inline(skill, where))
                continue
            bundles.append(await self._stored(skill.skill_id, skill.version, f"{where}.skill_id", f"{where}.version"))
        names = [bundle.name for bundle in bundles]
        if len(set(names)) != len(names):
            raise InvalidRequest("Two skills of the container have one name.", param=param, code="invalid_value")
        return bundles


def _inline(skill: InlineSkill, where: str) -> Bundle:
    try:
        data = base64.b64decode(skill.source.data, validate=True)
    except (binascii.Error, ValueError) as exc:
        raise InvalidRequest(f"The inline skill's data is not base64: {exc}.", param=f"{where}.source.data") from exc
    if len(data) > MAX_BUNDLE_BYTES:
        raise InvalidRequest(f"The inline skill is larger than {MAX_BUNDLE_BYTES} bytes.", param=f"{where}.source.data")
    check_name(skill.name, f"{where}.name")
    bundle = read_bundle([(f"{skill.name}.zip", data)])
    return Bundle(skill.name, skill.description, bundle.archive)  # mounted under the name the request gives it


def _number(version: str, param: str) -> int:
    if not version.isdigit() or int(version) < 1:
        raise InvalidRequest(f"'{param}' must be a positive version number, not {version!r}.", param=param,
                             code="invalid_value")  # fmt: skip
    return int(version)
