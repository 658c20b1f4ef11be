"""Containers (``/v1/containers``): a directory of files and a sandboxed Python that keeps its state
between calls, where the code interpreter runs the model's code.

A container's rows live in the store (so one the server acknowledged is found after a restart);
its files live in its directory on the machine that runs its code (``--containers-dir``, shared by
the workers of one server) and, as of each upload and each cell's end, in the store; its Python lives
in the process that last ran its code, named in the store. Code that reaches another process (another
worker, a replica on another machine, this one after a restart) starts a fresh Python there, next to
the files brought back from the store where they are not, and the output says so. A process stops its
Python for a container another has claimed or that is gone. Any replica reads a file's bytes from
the store. A container idle past ``expires_after`` expires: its Python is
stopped, its files are removed, and it answers ``400 Container is expired.`` from then on, as
OpenAI's do.
"""

from __future__ import annotations

import logging
import time
from collections.abc import AsyncIterator, Mapping
from dataclasses import dataclass, replace
from pathlib import Path, PurePosixPath
from typing import Any, Literal

import anyio

from responsa.external import CommandRun, Execution, SandboxLimits, UrlPolicy
from responsa.protocol import (
    Conflict,
    ContainerExpiry,
    ContainerFileObject,
    ContainerObject,
    CreateContainerRequest,
    InvalidRequest,
    NotFound,
    new_id,
)
from responsa.store import ContainerRepository, Order

from ..files import FileService
from ._container_files import FoundFile, safe_name, write_skills
from ._machine import Machine, container_egress
from ._network_policy import check_network_policy

__all__ = ["CodeRun", "CommandOutcome", "ContainerService"]

logger = logging.getLogger(__name__)

RESTARTED = (
    "[Python restarted: this container's earlier Python state was in another worker or server process, or "
    "before a restart, and is gone; its files in /mnt/data are kept]\n"
)
"""What a cell's output starts with when it ran in a fresh Python where the container had one before."""

_LOOKED_UP = 500
"""Containers whose state one query of the periodic pass reads."""

DEFAULT_MINUTES = 20
DEFAULT_MEMORY = "1g"


@dataclass(frozen=True)
class CommandOutcome:
    """A shell command's end, and the files it wrote or changed (now listed in the container)."""

    ran: CommandRun
    files: list[ContainerFileObject]


@dataclass(frozen=True)
class CodeRun:
    """A cell's outcome, and the files it wrote or changed (now listed in the container)."""

    execution: Execution
    files: list[ContainerFileObject]


class ContainerService:
    """Containers of one tenant (``for_tenant``), on the machine's sandboxes."""

    def __init__(
        self,
        store: ContainerRepository,
        files: FileService,
        root: Path,
        limits: SandboxLimits,
        unavailable: str | None = None,
        machine: Machine | None = None,
        egress: UrlPolicy | None = None,
    ) -> None:
        """``egress``: where a container's allowlist may reach (``container_egress``; public addresses only
        by default)."""
        self._store = store
        self._files = files
        self.unavailable = unavailable
        """Why code cannot run here (no sandbox); None when it can."""
        self._machine = machine or Machine(root, limits, files.max_bytes, egress=egress or container_egress(False))

    def for_tenant(self, tenant: str) -> ContainerService:
        """The tenant's view (made once per tenant: every response with tools asks for it)."""
        view = self._machine.views.get(tenant)
        if view is None:
            view = self._machine.views[tenant] = ContainerService(
                self._store.scoped(tenant), self._files.for_tenant(tenant), self._machine.root,
                self._machine.limits, self.unavailable, self._machine,
            )  # fmt: skip
        return view

    async def create(
        self, request: CreateContainerRequest, skills: Mapping[str, Mapping[PurePosixPath, bytes]] | None = None
    ) -> ContainerObject:
        """A running container with ``file_ids`` copied in under their names, and ``skills`` (the request's,
        resolved by the caller) mounted."""
        check_network_policy(request.network_policy, "network_policy")
        minutes = (request.expires_after or ContainerExpiry(minutes=DEFAULT_MINUTES)).minutes
        container = await self.new(request.name, request.memory_limit, request.file_ids, minutes,
                                   network_policy=request.network_policy)  # fmt: skip
        if skills:
            await self.mount_skills(container.id, skills)
        return container

    async def new(
        self,
        name: str,
        memory_limit: str | None,
        file_ids: list[str],
        minutes: int = DEFAULT_MINUTES,
        container_id: str | None = None,
        network_policy: Mapping[str, Any] | None = None,
    ) -> ContainerObject:
        """A running container (``memory_limit`` 1g unless given), under ``container_id`` when the code
        interpreter named it already."""
        names = [await self._copied_name(file_id) for file_id in file_ids]
        now = int(time.time())
        container = ContainerObject(id=container_id or new_id("cntr"), created_at=now, last_active_at=now,
                                    status="running", expires_after=ContainerExpiry(minutes=minutes),
                                    memory_limit=memory_limit or DEFAULT_MEMORY, name=name,
                                    network_policy=dict(network_policy or {"type": "disabled"}))  # fmt: skip
        await self._store.create_container(container)
        for file_id, name in zip(file_ids, names, strict=True):
            await self._add(container, name, self._files.parts(file_id))
        return container

    async def _copied_name(self, file_id: str) -> str:
        """The name an uploaded file of the tenant's takes in a container (404 for another's, or none)."""
        return safe_name((await self._files.get(file_id)).filename)

    async def check_file(self, file_id: str) -> None:
        """404 unless the tenant has this uploaded file (to copy into a container)."""
        await self._copied_name(file_id)

    async def get(self, container_id: str, param: str = "container_id") -> ContainerObject:
        """The container (404 naming ``param`` where there is none)."""
        container = await self._store.get_container(container_id)
        if container is None:
            raise _not_found(container_id, param)
        return container

    async def running(self, container_id: str, param: str = "container_id") -> ContainerObject:
        """The container, if it can still run code (404 where there is none, 400 once expired, as OpenAI
        answers), ``param`` named in either."""
        container = await self.get(container_id, param)
        if container.status != "running":
            raise InvalidRequest("Container is expired.", param=param)
        return container

    async def page(
        self, *, limit: int, order: Order, after: str | None, name: str | None
    ) -> tuple[list[ContainerObject], bool]:
        return await self._store.list_containers(limit=limit, order=order, after=after, name=name)

    async def delete(self, container_id: str) -> None:
        if not await self._store.delete_container(container_id):
            raise _not_found(container_id)
        await self._machine.release(container_id)

    async def add_upload(self, container_id: str, filename: str, chunks: AsyncIterator[bytes]) -> ContainerFileObject:
        return await self._add(await self.running(container_id), safe_name(filename), chunks)

    async def add_file(self, container_id: str, file_id: str) -> ContainerFileObject:
        container = await self.running(container_id)
        return await self._add(container, await self._copied_name(file_id), self._files.parts(file_id))

    async def _add(self, container: ContainerObject, name: str, chunks: AsyncIterator[bytes]) -> ContainerFileObject:
        found = await self._machine.directory(container.id).write(name, chunks, self._machine.max_file_bytes)
        known = await self._store.container_files_by_path(container.id)
        if found.path in known:  # the same name again: the file is replaced, its id kept
            await self._store.resize_container_file(known[found.path].id, found.size)
            file = known[found.path].model_copy(update={"bytes": found.size})
        else:
            file = await self._list_file(container.id, found, "user")
        await self._keep(container.id, file.id, found)
        return file

    async def _keep(self, container_id: str, file_id: str, found: FoundFile) -> None:
        """Store the file's bytes as they are here now, for any replica to read or bring back, and
        remember the version stored (a cell's end stores it again only once it changes)."""
        try:
            parts = [chunk async for chunk in self._machine.directory(container_id).read(found.path)]
        except OSError:  # gone, or made a link, since it was listed: the next cell's end sees it again
            return
        await self._store.put_container_file_bytes(container_id, file_id, parts or [b""])
        self._machine.seen.setdefault(container_id, {})[found.path] = (found.size, found.modified)

    async def _stored(self, file_id: str, first: bytes) -> AsyncIterator[bytes]:
        """A file's bytes from the store, ``first`` the part read already."""
        yield first
        position = 1
        while (part := await self._store.container_file_part(file_id, position)) is not None:
            yield part
            position += 1

    async def _list_file(
        self, container_id: str, found: FoundFile, source: Literal["user", "assistant"]
    ) -> ContainerFileObject:
        file = ContainerFileObject(id=new_id("cfile"), created_at=int(time.time()), bytes=found.size,
                                   container_id=container_id, path=found.path, source=source)  # fmt: skip
        await self._store.add_container_file(file)
        return file

    async def file(self, container_id: str, file_id: str) -> ContainerFileObject:
        await self.get(container_id)
        file = await self._store.get_container_file(container_id, file_id)
        if file is None:
            raise NotFound(f"No file found with id '{file_id}' in container '{container_id}'.", param="file_id")
        return file

    async def list_files(
        self, container_id: str, *, limit: int, order: Order, after: str | None
    ) -> tuple[list[ContainerFileObject], bool]:
        await self.get(container_id)
        return await self._store.list_container_files(container_id, limit=limit, order=order, after=after)

    async def content(self, container_id: str, file_id: str) -> tuple[ContainerFileObject, AsyncIterator[bytes]]:
        file = await self.file(container_id, file_id)
        first = await self._store.container_file_part(file.id, 0)
        if first is not None:
            return file, self._stored(file.id, first)
        directory = self._machine.directory(container_id)
        reader = directory.read(file.path)
        try:
            first = await anext(reader, b"")
        except OSError as exc:
            if not directory.root.is_dir():  # nothing of the container's is on this machine
                raise _elsewhere(container_id, [file.path]) from exc
            raise NotFound(f"The file '{file_id}' is no longer in container '{container_id}'.",
                           param="file_id") from exc  # fmt: skip

        async def chunks() -> AsyncIterator[bytes]:
            yield first
            async for chunk in reader:
                yield chunk

        return file, chunks()

    async def delete_file(self, container_id: str, file_id: str) -> None:
        file = await self.file(container_id, file_id)
        await self._store.delete_container_files(container_id, [file.id])
        self._machine.directory(container_id).remove(file.path)

    async def mount_skills(self, container_id: str, skills: Mapping[str, Mapping[PurePosixPath, bytes]]) -> None:
        """Each skill's files (checked paths inside its folder) at /mnt/skills/<name> of the container,
        read-only there (a skill of the same name replaced); kept in the store too, so that a process
        on another machine that takes the container over mounts them as well."""
        stored = {name: {str(path): data for path, data in files.items()} for name, files in skills.items()}
        await self._store.put_container_skills(container_id, stored)
        await anyio.to_thread.run_sync(write_skills, self._machine.skills(container_id), stored)

    async def run(self, container: ContainerObject, code: str) -> CodeRun:
        """Run a cell in the container's Python; the files it wrote are listed (``source: assistant``)."""
        holder = await self._claim(container)
        execution = await self._machine.sandbox(container).run(code)
        if holder not in (None, self._machine.name):
            execution = replace(execution, logs=RESTARTED + execution.logs)
        return CodeRun(execution, await self._ran(container.id))

    async def command(self, container: ContainerObject, command: str, seconds: float, limit: int) -> CommandOutcome:
        """Run a shell command in the container (the hosted shell); the files it wrote are listed."""
        await self._claim(container)
        ran = await self._machine.sandbox(container).command(command, seconds, limit)
        return CommandOutcome(ran, await self._ran(container.id))

    async def _claim(self, container: ContainerObject) -> str | None:
        """The container's sandbox made this process's (its files brought here first); the process that
        held it before."""
        if self.unavailable is not None:
            raise InvalidRequest(f"Code cannot run on this server: {self.unavailable}.", code="unsupported_value")
        await self._store.touch_container(container.id, int(time.time()))
        holder = (await self._store.container_pythons([container.id])).get(container.id)
        if holder != self._machine.name:
            await self._take_over(container.id, holder)
        return holder

    async def _ran(self, container_id: str) -> list[ContainerFileObject]:
        await self._store.touch_container(container_id, int(time.time()))
        return await self._sync(container_id)

    async def _take_over(self, container_id: str, holder: str | None) -> None:
        """Make a fresh Python of this process's the container's, next to its files: those the store
        has that this place lacks (all of them where it last ran elsewhere) are brought back first."""
        await self._machine.stop(container_id)  # a Python of ours from before another process took it
        directory = self._machine.directory(container_id)
        if holder is not None and not self._machine.here(holder):
            await anyio.to_thread.run_sync(directory.remove_all)  # a copy from before it moved away
        here = {entry.path: entry.size for entry in await anyio.to_thread.run_sync(directory.scan)}
        for path, file in (await self._store.container_files_by_path(container_id)).items():
            if here.get(path) == file.bytes:
                continue
            first = await self._store.container_file_part(file.id, 0)
            if first is None:  # listed before the store kept files' bytes: only its old machine has it
                raise _elsewhere(container_id, [path])
            try:
                await directory.restore(path, self._stored(file.id, first), self._machine.max_file_bytes)
            except ValueError:  # the code made a link of a folder on its way: the next cell's end unlists it
                logger.warning("container %s: not restoring %s through a link", container_id, path)
        found = await anyio.to_thread.run_sync(directory.scan)
        self._machine.seen[container_id] = {entry.path: (entry.size, entry.modified) for entry in found}
        skills = await self._store.container_skills(container_id)
        if skills:  # those it mounts, as the store keeps them
            await anyio.to_thread.run_sync(write_skills, self._machine.skills(container_id), skills)
        await self._store.claim_container_python(container_id, self._machine.name)

    async def _sync(self, container_id: str) -> list[ContainerFileObject]:
        """List what the cell wrote: new files, files of a new size; forget files that went."""
        found = await anyio.to_thread.run_sync(self._machine.directory(container_id).scan)
        known = await self._store.container_files_by_path(container_id)
        seen = self._machine.seen.setdefault(container_id, {})
        changed: list[ContainerFileObject] = []
        for entry in found:
            listed = known.pop(entry.path, None)
            if listed is None:
                listed = await self._list_file(container_id, entry, "assistant")
                changed.append(listed)
            elif listed.bytes != entry.size:
                await self._store.resize_container_file(listed.id, entry.size)
                changed.append(listed.model_copy(update={"bytes": entry.size}))
            if seen.get(entry.path) != (entry.size, entry.modified):  # new, or rewritten (at any size)
                await self._keep(container_id, listed.id, entry)
        await self._store.delete_container_files(container_id, [file.id for file in known.values()])
        for path in known:
            seen.pop(path, None)
        return changed

    async def expire_idle(self) -> int:
        """Expire every tenant's containers idle past their time: Python stopped, files removed."""
        idle = await self._store.idle_containers(int(time.time()))
        for tenant, container_id in idle:
            await self._machine.release(container_id)
            await self._store.scoped(tenant).expire_container(container_id)
        if idle:
            logger.info("expired %d idle containers", len(idle))
        await self._let_go()
        return len(idle)

    async def _let_go(self) -> None:
        """Stop this process's Pythons of containers another process has claimed since; of containers
        gone (deleted or expired through another process), remove the files here too, whatever this
        place did with them (ran their code, or only took an upload: every directory counts)."""
        ours = sorted(set(self._machine.sandboxes) | set(await anyio.to_thread.run_sync(self._machine.container_ids)))
        for start in range(0, len(ours), _LOOKED_UP):
            some = ours[start : start + _LOOKED_UP]
            holders = await self._store.container_pythons(some)
            for container_id in some:
                if container_id not in holders:
                    await self._machine.release(container_id)
                elif holders[container_id] != self._machine.name:
                    await self._machine.stop(container_id)

    async def aclose(self) -> None:
        """Stop every Python (the containers' files stay, for after a restart)."""
        for sandbox in list(self._machine.sandboxes.values()):
            await sandbox.close()
        self._machine.sandboxes.clear()


def _elsewhere(container_id: str, paths: list[str]) -> Conflict:
    """409 for a container whose files are on another machine (a replica's)."""
    return Conflict(
        f"Container '{container_id}' keeps its files ({', '.join(sorted(paths)[:3])}) on another server: its code "
        "runs and its files are read on the server that has them.",
        param="container_id",
        code="container_elsewhere",
    )


def _not_found(container_id: str, param: str = "container_id") -> NotFound:
    return NotFound(f"No container found with id '{container_id}'.", param=param)
