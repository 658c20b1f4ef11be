"""A container's directory on this machine: what the sandbox sees as ``/mnt/data``; and its skills'
folders, which it sees read-only at ``/mnt/skills`` (``write_skills``).

The code in the sandbox writes there, so everything in it is hostile: a name may be a symlink to a
host file, a directory may hold a million files. The server therefore never follows a link there:
it lists regular files only (not through linked directories), reads a file only if, opened without
following links, it is a regular file inside the directory, and writes by renaming a new file over
the name (which replaces a link instead of writing through it).
"""

from __future__ import annotations

import os
import shutil
import stat
import tempfile
from collections.abc import AsyncIterator, Mapping
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

import anyio

from responsa.protocol import InvalidRequest, PayloadTooLarge

__all__ = ["MOUNT", "ContainerDirectory", "FoundFile", "write_skills"]

MOUNT = PurePosixPath("/mnt/data")
"""Where the sandbox sees the container's directory: a container file's ``path`` is under it."""

MAX_FILES = 1000
"""Files listed per container at most (the rest of a flood the code writes is not listed)."""

MAX_DEPTH = 16
"""Directories below this depth are not listed (nor walked: the code may nest them thousands deep)."""

_READ_BYTES = 256 * 1024


@dataclass(frozen=True)
class FoundFile:
    path: str
    """As the sandbox sees it: ``/mnt/data/…``."""
    size: int
    modified: int = 0
    """Its modification time (ns), to tell a file rewritten at the same size."""


def safe_name(filename: str) -> str:
    """The last part of an uploaded file's name, as a name in the container (400 if nothing is left)."""
    name = PurePosixPath(filename.replace("\\", "/")).name.strip()
    if name in ("", ".", "..") or "\x00" in name:
        raise InvalidRequest(f"Invalid file name: {filename!r}.", param="file", code="invalid_value")
    return name


class ContainerDirectory:
    """One container's files, as the server handles them (never through a link the code made)."""

    def __init__(self, root: Path) -> None:
        self.root = root

    def _host_path(self, path: str) -> Path:
        """Where ``path`` (``/mnt/data/…``) is here; ValueError for a path outside, or through a link."""
        relative = PurePosixPath(path).relative_to(MOUNT)
        if ".." in relative.parts or not relative.parts:
            raise ValueError(path)
        host = self.root.joinpath(*relative.parts)
        root = os.path.realpath(self.root)
        if os.path.commonpath([os.path.realpath(host.parent), root]) != root:
            raise ValueError(path)  # a linked directory on the way
        return host

    async def write(self, name: str, chunks: AsyncIterator[bytes], max_bytes: int) -> FoundFile:
        """Write ``name`` at the top of the directory from ``chunks`` (413 past ``max_bytes``)."""
        await anyio.to_thread.run_sync(lambda: self.root.mkdir(parents=True, exist_ok=True))
        return FoundFile(str(MOUNT / name), *await _replace(self.root, name, chunks, max_bytes))

    async def restore(self, path: str, chunks: AsyncIterator[bytes], max_bytes: int) -> None:
        """Write the file at ``path`` (``/mnt/data/…``, in folders too) from ``chunks``: a container's
        file brought back from the store. Never through a link: the folders on the way are checked
        after they are made, and the file is renamed over the name."""
        host = self._host_path(path)
        await anyio.to_thread.run_sync(lambda: host.parent.mkdir(parents=True, exist_ok=True))
        host = self._host_path(path)  # a link made meanwhile on the way is refused here
        await _replace(host.parent, host.name, chunks, max_bytes)

    def scan(self) -> list[FoundFile]:
        """The regular files in the directory, links and what is behind them left out."""
        found: list[FoundFile] = []
        if not self.root.is_dir():
            return found
        for folder, directories, names in os.walk(self.root):  # does not enter linked directories
            deep = len(Path(folder).relative_to(self.root).parts) >= MAX_DEPTH
            directories[:] = [] if deep else sorted(directories)
            for name in sorted(names):
                if name.startswith(".upload-"):
                    continue
                host = Path(folder) / name
                try:
                    info = host.lstat()
                except OSError:
                    continue
                if stat.S_ISREG(info.st_mode):
                    path = str(MOUNT / host.relative_to(self.root).as_posix())
                    found.append(FoundFile(path, info.st_size, info.st_mtime_ns))
                if len(found) >= MAX_FILES:
                    return found
        return found

    async def read(self, path: str) -> AsyncIterator[bytes]:
        """The bytes of the regular file at ``path``; FileNotFoundError for a link, or anything else."""
        handle = await anyio.to_thread.run_sync(self._open, path)
        try:
            while chunk := await anyio.to_thread.run_sync(os.read, handle, _READ_BYTES):
                yield chunk
        finally:
            os.close(handle)

    def _open(self, path: str) -> int:
        try:
            host = self._host_path(path)
        except ValueError as exc:
            raise FileNotFoundError(path) from exc
        handle = os.open(host, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
        if not stat.S_ISREG(os.fstat(handle).st_mode):
            os.close(handle)
            raise FileNotFoundError(path)
        return handle

    def remove(self, path: str) -> None:
        """Remove the file at ``path`` (a link there is removed, not what it points to)."""
        try:
            self._host_path(path).unlink(missing_ok=True)
        except (OSError, ValueError):
            pass

    def remove_all(self) -> None:
        shutil.rmtree(self.root, ignore_errors=True)


async def _replace(folder: Path, name: str, chunks: AsyncIterator[bytes], max_bytes: int) -> tuple[int, int]:
    """Write ``name`` in ``folder`` from ``chunks`` (413 past ``max_bytes``) by renaming a new file over
    it; its size and modification time."""
    handle, temporary = tempfile.mkstemp(dir=folder, prefix=".upload-")
    size = 0
    try:
        with os.fdopen(handle, "wb") as out:
            async for chunk in chunks:
                size += len(chunk)
                if size > max_bytes:
                    raise PayloadTooLarge(f"The file is larger than this server's limit of {max_bytes} bytes.")
                await anyio.to_thread.run_sync(out.write, chunk)
            out.flush()
            modified = os.fstat(out.fileno()).st_mtime_ns
        os.chmod(temporary, 0o644)
        os.replace(temporary, folder / name)  # replaces a link of that name, never writes through it
    except BaseException:
        with anyio.CancelScope(shield=True):
            Path(temporary).unlink(missing_ok=True)
        raise
    return size, modified


def write_skills(root: Path, skills: Mapping[str, Mapping[str, bytes]]) -> None:
    """Write each skill's folder under ``root`` anew (blocking); a name or a path that would leave its
    folder is skipped (they were checked on upload: this is the second line)."""
    for name, files in skills.items():
        if "/" in name or name in ("", ".", ".."):
            continue
        folder = root / name
        shutil.rmtree(folder, ignore_errors=True)
        for path, data in files.items():
            parts = PurePosixPath(path).parts
            if not parts or ".." in parts or PurePosixPath(path).is_absolute():
                continue
            target = folder.joinpath(*parts)
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(data)
