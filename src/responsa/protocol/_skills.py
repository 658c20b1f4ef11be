"""Skills (``/v1/skills``): folders of files with a ``SKILL.md`` the model reads when it needs them,
versioned; and the skills a hosted shell's container mounts (``skill_reference``, ``inline``)."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field

from ._base import WireModel, WirePart

__all__ = ["ContainerSkill", "InlineSkill", "InlineSkillSource", "SkillObject", "SkillReference", "SkillVersionObject"]


class SkillObject(WireModel):
    id: str
    object: Literal["skill"] = "skill"
    created_at: int
    name: str
    description: str
    default_version: str
    latest_version: str


class SkillVersionObject(WireModel):
    id: str
    object: Literal["skill.version"] = "skill.version"
    created_at: int
    skill_id: str
    version: str
    name: str
    description: str


class SkillReference(WirePart):
    """A skill of the tenant's, at ``version`` (a number or ``latest``; its default when left out)."""

    type: Literal["skill_reference"] = "skill_reference"
    skill_id: str
    version: str | int | None = None


class InlineSkillSource(WirePart):
    type: Literal["base64"] = "base64"
    media_type: Literal["application/zip"] = "application/zip"
    data: str


class InlineSkill(WirePart):
    """A skill given in the request: its zip, base64."""

    type: Literal["inline"] = "inline"
    name: str
    description: str
    source: InlineSkillSource


ContainerSkill = Annotated[SkillReference | InlineSkill, Field(discriminator="type")]
