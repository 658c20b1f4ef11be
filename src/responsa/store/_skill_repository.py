"""The skill repository: a tenant's skills and their versions, each version's files kept as one zip."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

from ._base import Order

__all__ = ["SkillRepository", "SkillRow", "SkillVersionRow"]


@dataclass(frozen=True)
class SkillRow:
    id: str
    name: str
    description: str
    default_version: int
    latest_version: int
    created_at: int


@dataclass(frozen=True)
class SkillVersionRow:
    skill_id: str
    version: int
    id: str
    name: str
    description: str
    created_at: int


class SkillRepository(Protocol):
    tenant: str

    def scoped(self, tenant: str) -> SkillRepository: ...

    async def create_skill(self, skill: SkillRow, version: SkillVersionRow, bundle: bytes) -> None: ...

    async def get_skill(self, skill_id: str) -> SkillRow | None: ...

    async def list_skills(self, *, limit: int, order: Order, after: str | None) -> tuple[list[SkillRow], bool]: ...

    async def set_default_version(self, skill_id: str, version: int) -> SkillRow | None:
        """The skill with ``version`` its default (None: no such skill or version)."""
        ...

    async def delete_skill(self, skill_id: str) -> bool: ...

    async def add_version(
        self, skill_id: str, version_id: str, name: str, description: str, bundle: bytes, default: bool
    ) -> SkillVersionRow | None:
        """The skill's next version (its number one past the latest, in the same transaction); None: no skill."""
        ...

    async def get_version(self, skill_id: str, version: int) -> SkillVersionRow | None: ...

    async def list_versions(
        self, skill_id: str, *, limit: int, order: Order, after: str | None
    ) -> tuple[list[SkillVersionRow], bool]: ...

    async def delete_version(self, skill_id: str, version: int) -> bool:
        """Remove a version that is not the default (the latest becomes the newest left)."""
        ...

    async def bundle(self, skill_id: str, version: int) -> bytes | None: ...
