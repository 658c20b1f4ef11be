"""The container a request's server-run code or commands reach (the code interpreter's, the hosted
shell's): one named by id, the one an earlier call in the context used, or a new one, made (under the
id its calls already carry) when the first of them runs."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import PurePosixPath
from typing import TYPE_CHECKING, Any

import anyio

from responsa.protocol import ContainerObject, ResponsaError, new_id

if TYPE_CHECKING:
    from ..containers import ContainerService

__all__ = ["ContainerSession", "auto_session", "named_session"]


@dataclass
class ContainerSession:
    """The request's container: known from the start, or made (under ``container_id``) when first used."""

    containers: ContainerService
    container_id: str
    container: ContainerObject | None
    name: str = ""
    """A new container's name (its kind's)."""
    memory_limit: str | None = None
    file_ids: Sequence[str] = ()
    network_policy: Mapping[str, Any] | None = None
    skills: Mapping[str, Mapping[PurePosixPath, bytes]] = field(default_factory=dict)
    """Skills the container is to have at /mnt/skills (mounted when it is first used)."""
    _making: anyio.Lock = field(default_factory=anyio.Lock)

    async def ready(self) -> ContainerObject:
        async with self._making:  # parallel calls of one turn share the one container
            if self.container is None:
                self.container = await self.containers.new(self.name, self.memory_limit, list(self.file_ids),
                                                           container_id=self.container_id,
                                                           network_policy=self.network_policy)  # fmt: skip
            if self.skills:
                await self.containers.mount_skills(self.container_id, self.skills)
                self.skills = {}
            return self.container


async def named_session(containers: ContainerService, container_id: str, param: str) -> ContainerSession:
    """A running container of the tenant's (400 ``Container is expired.``, 404 for none)."""
    container = await containers.running(container_id, param=param)
    return ContainerSession(containers, container.id, container)


async def auto_session(
    containers: ContainerService,
    used: Iterable[str],
    name: str,
    memory_limit: str | None,
    file_ids: Sequence[str],
    network_policy: Mapping[str, Any] | None = None,
) -> ContainerSession:
    """The container the context's last call used (``used``: the containers of its calls, the last
    first) while it runs, else a new one with ``file_ids`` (each checked now, not once the model has
    written its call)."""
    for container_id in used:
        try:
            container = await containers.running(container_id)
        except ResponsaError:
            break
        return ContainerSession(containers, container.id, container)
    for file_id in file_ids:
        await containers.check_file(file_id)
    return ContainerSession(containers, new_id("cntr"), None, name, memory_limit, file_ids, network_policy)
