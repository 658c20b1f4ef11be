"""The container repository: the rows that list containers and their files, for one tenant."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Protocol

from responsa.protocol import ContainerFileObject, ContainerObject

from ._base import Order

__all__ = ["ContainerRepository"]


class ContainerRepository(Protocol):
    """Containers of ``tenant`` (``scoped`` makes the view of another) and the files listed in them."""

    tenant: str

    def scoped(self, tenant: str) -> ContainerRepository: ...

    async def create_container(self, container: ContainerObject) -> None: ...

    async def get_container(self, container_id: str) -> ContainerObject | None: ...

    async def list_containers(
        self, *, limit: int, order: Order, after: str | None, name: str | None
    ) -> tuple[list[ContainerObject], bool]: ...

    async def touch_container(self, container_id: str, at: int) -> None: ...

    async def claim_container_python(self, container_id: str, python: str) -> str | None:
        """``python`` (a process's name for the Python it starts) now holds the container's state;
        the one that held it before, if any."""

    async def container_pythons(self, container_ids: list[str]) -> dict[str, str | None]:
        """Which Python holds each of these containers of any tenant, for those still running."""

    async def expire_container(self, container_id: str) -> None:
        """It is ``expired``: its file rows go (the container's own row stays, to say so)."""

    async def delete_container(self, container_id: str) -> bool: ...

    async def idle_containers(self, now: int) -> list[tuple[str, str]]:
        """(tenant, id) of every tenant's running containers idle past their minutes at ``now``."""

    async def add_container_file(self, file: ContainerFileObject) -> None: ...

    async def resize_container_file(self, file_id: str, size: int) -> None: ...

    async def get_container_file(self, container_id: str, file_id: str) -> ContainerFileObject | None: ...

    async def container_files_by_path(self, container_id: str) -> dict[str, ContainerFileObject]: ...

    async def list_container_files(
        self, container_id: str, *, limit: int, order: Order, after: str | None
    ) -> tuple[list[ContainerFileObject], bool]: ...

    async def delete_container_files(self, container_id: str, file_ids: list[str]) -> int:
        """Their rows and their bytes."""

    async def put_container_file_bytes(self, container_id: str, file_id: str, parts: list[bytes]) -> None:
        """The file's bytes now, in parts (what was stored before is replaced, at once)."""

    async def put_container_skills(self, container_id: str, skills: Mapping[str, Mapping[str, bytes]]) -> None:
        """The files (by path inside each skill's folder) of the skills the container mounts, by name
        (a skill of the same name replaced)."""
        ...

    async def container_skills(self, container_id: str) -> dict[str, dict[str, bytes]]: ...

    async def container_file_part(self, file_id: str, position: int) -> bytes | None:
        """One part of a file's stored bytes (None past the last, or for a file stored without them)."""
