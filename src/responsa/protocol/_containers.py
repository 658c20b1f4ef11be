"""Containers: where the code interpreter's code runs, with its files under ``/mnt/data``
(``openai.types.container_*`` and ``openai.types.containers``)."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field

from ._base import WireModel, WirePart
from ._skills import ContainerSkill

__all__ = [
    "MEMORY_LIMITS",
    "ContainerExpiry",
    "ContainerFileObject",
    "ContainerObject",
    "CreateContainerFileRequest",
    "CreateContainerRequest",
]

MEMORY_LIMITS = ("1g", "4g", "16g", "64g")
"""What ``memory_limit`` may be (OpenAI's sizes); ``1g`` by default."""


class ContainerExpiry(WirePart):
    anchor: Literal["last_active_at"] = "last_active_at"
    minutes: int = Field(ge=1, le=10080)


class ContainerObject(WireModel):
    id: str
    object: Literal["container"] = "container"
    created_at: int
    status: str
    """``running`` while it can run code; ``expired`` once idle past ``expires_after`` (its files gone)."""
    expires_after: ContainerExpiry
    last_active_at: int
    memory_limit: str
    name: str
    network_policy: dict[str, Any] = Field(default_factory=lambda: {"type": "disabled"})


class ContainerFileObject(WireModel):
    id: str
    object: Literal["container.file"] = "container.file"
    created_at: int
    bytes: int
    container_id: str
    path: str
    source: Literal["user", "assistant"]


class CreateContainerRequest(WireModel):
    name: str = Field(min_length=1, max_length=256)
    expires_after: ContainerExpiry | None = None
    file_ids: list[str] = Field(default_factory=list, max_length=100)
    memory_limit: Literal["1g", "4g", "16g", "64g"] | None = None
    network_policy: dict[str, Any] | None = None
    skills: list[ContainerSkill] | None = Field(default=None, max_length=50)


class CreateContainerFileRequest(WireModel):
    """A container file from an uploaded file (the JSON form; a multipart upload is the other)."""

    file_id: str
