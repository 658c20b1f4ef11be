"""What one process runs for the containers of every tenant: their directories on this machine and
their Pythons, and the name the store gives this process's Pythons (which place, which process)."""

from __future__ import annotations

import hashlib
import os
import shutil
import socket
import tempfile
from dataclasses import dataclass, field, replace
from functools import cached_property, partial
from pathlib import Path
from typing import TYPE_CHECKING

import anyio

from responsa.external import EgressProxy, PythonSandbox, SandboxLimits, UrlPolicy
from responsa.protocol import ContainerObject

from ._container_files import ContainerDirectory

if TYPE_CHECKING:
    from ._containers import ContainerService

__all__ = ["Machine", "container_egress"]

_GIB = 1024**3
_MEMORY = {"1g": _GIB, "4g": 4 * _GIB, "16g": 16 * _GIB, "64g": 64 * _GIB}


def container_egress(allow_loopback: bool) -> UrlPolicy:
    """Where a container's network allowlist may reach: public addresses, and loopback where
    ``allow_loopback`` (a server without API keys); never link-local or metadata addresses."""
    return UrlPolicy(allow_loopback=allow_loopback, public=True, subject="container network",
                     code="egress_not_allowed")  # fmt: skip


@dataclass
class Machine:
    """What this process runs for every tenant: the containers' directories and their Pythons."""

    root: Path
    limits: SandboxLimits
    max_file_bytes: int
    sandboxes: dict[str, PythonSandbox] = field(default_factory=dict)
    views: dict[str, ContainerService] = field(default_factory=dict)
    """Each tenant's view of the containers (tenants are the API keys': a few)."""
    nonce: str = field(default_factory=lambda: os.urandom(4).hex())
    egress: UrlPolicy = field(default_factory=lambda: container_egress(False))
    """Where a container's allowlist may reach (the server's egress policy, as its settings make it)."""
    seen: dict[str, dict[str, tuple[int, int]]] = field(default_factory=dict)
    """Each container's files as last stored from here: size and modification time by path."""

    @cached_property
    def place(self) -> str:
        """This machine's containers directory (a digest of host and path, so that a name fits its
        column whatever the path): processes of one place see the same files."""
        return hashlib.sha256(f"{socket.gethostname()}:{self.root.resolve()}".encode()).hexdigest()[:16]

    @cached_property
    def name(self) -> str:
        """This process's Pythons, as the store names the one holding a container's state."""
        return f"{self.place}:{os.getpid()}:{self.nonce}"

    def here(self, python: str) -> bool:
        """Whether the process named ``python`` ran its Pythons in this place."""
        return python.rsplit(":", 2)[0] == self.place

    def directory(self, container_id: str) -> ContainerDirectory:
        return ContainerDirectory(self.root / container_id)

    def container_ids(self) -> list[str]:
        """The containers this place has a directory of (blocking: a listing of the directory)."""
        try:
            return [entry.name for entry in self.root.iterdir() if entry.name.startswith("cntr_") and entry.is_dir()]
        except FileNotFoundError:
            return []

    def sandbox(self, container: ContainerObject) -> PythonSandbox:
        sandbox = self.sandboxes.get(container.id)
        if sandbox is None:
            limits = replace(self.limits, memory_bytes=_MEMORY.get(container.memory_limit, _GIB))
            sandbox = PythonSandbox(
                self.root / container.id, limits, self.skills(container.id), self._egress(container)
            )
            self.sandboxes[container.id] = sandbox
        return sandbox

    def _egress(self, container: ContainerObject) -> EgressProxy | None:
        """The proxy of a container whose network policy allows some hosts (a Unix socket's path is short:
        under the system's temporary directory, named by a digest)."""
        policy = container.network_policy
        if policy.get("type") != "allowlist":
            return None
        name = hashlib.sha256(f"{self.name}:{container.id}".encode()).hexdigest()[:16]
        path = Path(tempfile.gettempdir()) / "responsa-egress" / f"{name}.sock"
        return EgressProxy(path, list(policy.get("allowed_domains") or []), self.egress)

    def skills(self, container_id: str) -> Path:
        """Where the container's skills are kept on this machine (seen at /mnt/skills, read-only)."""
        return self.root / ".skills" / container_id

    async def release(self, container_id: str) -> None:
        """Stop the container's Python and remove its files and skills."""
        await self.stop(container_id)
        await anyio.to_thread.run_sync(self.directory(container_id).remove_all)
        await anyio.to_thread.run_sync(partial(shutil.rmtree, self.skills(container_id), ignore_errors=True))

    async def stop(self, container_id: str) -> None:
        """Stop the container's Python here, if it has one."""
        self.seen.pop(container_id, None)
        sandbox = self.sandboxes.pop(container_id, None)
        if sandbox is not None:
            await sandbox.close()
