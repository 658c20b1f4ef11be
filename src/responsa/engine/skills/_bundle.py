"""A skill's files as uploaded (a zip of one top-level folder, or the folder's files one by one, each
named by its path inside it), checked and made one zip the store keeps, and its ``SKILL.md`` front
matter read for its name and description.

Uploads are hostile: a path that leaves the folder (``..``, absolute, a drive), a link, a file or a
whole bundle past its limit (sizes counted as the bytes are read, never taken from the zip's headers:
a zip bomb stops at the limit), a ``SKILL.md`` missing or without front matter: each a 400 naming
what, before anything is written."""

from __future__ import annotations

import io
import stat
import zipfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import PurePosixPath
from typing import IO

import yaml  # type: ignore[import-untyped]

from responsa.protocol import InvalidRequest

__all__ = [
    "MAX_BUNDLE_BYTES",
    "MAX_FILES",
    "MAX_FILE_BYTES",
    "Bundle",
    "check_name",
    "mounted_files",
    "read_bundle",
    "unpack",
]

MAX_FILES = 500
MAX_FILE_BYTES = 25 * 1024 * 1024
MAX_BUNDLE_BYTES = 50 * 1024 * 1024
"""What one skill may hold, uncompressed (OpenAI's limits are not published; these are ours)."""
_NAME_CHARACTERS = frozenset("abcdefghijklmnopqrstuvwxyz0123456789-_")


@dataclass(frozen=True)
class Bundle:
    """A checked skill: its front matter's name and description, and its files as one zip (paths
    inside its one folder, named as the skill)."""

    name: str
    description: str
    archive: bytes


def _refused(message: str, param: str = "files") -> InvalidRequest:
    return InvalidRequest(message, param=param, code="invalid_skill")


def _safe_path(name: str) -> PurePosixPath:
    path = PurePosixPath(name.replace("\\", "/"))
    if path.is_absolute() or ".." in path.parts or not path.parts or ":" in path.parts[0]:
        raise _refused(f"The path {name!r} leaves the skill's folder.")
    return path


def _read_capped(source: IO[bytes], name: str, total: int) -> bytes:
    """The bytes of one file, read in pieces and refused past a file's or the bundle's limit."""
    data = bytearray()
    while piece := source.read(1 << 16):
        data += piece
        if len(data) > MAX_FILE_BYTES:
            raise _refused(f"The file {name!r} is larger than {MAX_FILE_BYTES} bytes.")
        if total + len(data) > MAX_BUNDLE_BYTES:
            raise _refused(f"The skill is larger than {MAX_BUNDLE_BYTES} bytes once unpacked.")
    return bytes(data)


def _from_zip(data: bytes) -> dict[PurePosixPath, bytes]:
    try:
        archive = zipfile.ZipFile(io.BytesIO(data))
    except zipfile.BadZipFile as exc:
        raise _refused(f"The zip could not be read: {exc}.") from exc
    files: dict[PurePosixPath, bytes] = {}
    total = 0
    with archive:
        entries = [entry for entry in archive.infolist() if not entry.is_dir()]
        if len(entries) > MAX_FILES:
            raise _refused(f"The skill has more than {MAX_FILES} files.")
        for entry in entries:
            path = _safe_path(entry.filename)
            if stat.S_ISLNK(entry.external_attr >> 16):
                raise _refused(f"The zip entry {entry.filename!r} is a link; a skill holds files only.")
            with archive.open(entry) as source:
                files[path] = _read_capped(source, entry.filename, total)
            total += len(files[path])
    return files


def _from_files(uploaded: Sequence[tuple[str, bytes]]) -> dict[PurePosixPath, bytes]:
    if len(uploaded) > MAX_FILES:
        raise _refused(f"The skill has more than {MAX_FILES} files.")
    files: dict[PurePosixPath, bytes] = {}
    total = 0
    for name, data in uploaded:
        files[_safe_path(name)] = _read_capped(io.BytesIO(data), name, total)
        total += len(data)
    return files


def _front_matter(text: str) -> tuple[str, str]:
    """``name`` and ``description`` of a ``SKILL.md``'s YAML front matter (between ``---`` lines)."""
    lines = text.lstrip("\ufeff").splitlines()
    if not lines or lines[0].strip() != "---" or "---" not in (line.strip() for line in lines[1:]):
        raise _refused("SKILL.md has no front matter: it must begin with '---', a YAML 'name' and 'description', "
                       "and '---'.")  # fmt: skip
    end = next(index for index, line in enumerate(lines[1:], 1) if line.strip() == "---")
    try:
        fields = yaml.safe_load("\n".join(lines[1:end]))
    except yaml.YAMLError as exc:
        raise _refused(f"SKILL.md's front matter is not YAML: {exc}.") from exc
    name, description = (fields.get(key) if isinstance(fields, dict) else None for key in ("name", "description"))
    check_name(name.strip() if isinstance(name, str) else None, "files", "SKILL.md's front matter needs a 'name'")
    if not isinstance(description, str) or not description.strip():
        raise _refused("SKILL.md's front matter needs a 'description'.")
    return str(name).strip(), description.strip()


def check_name(name: str | None, param: str, what: str = "A skill needs a name") -> None:
    """A skill's name is its folder's in the container: lowercase letters, digits, ``-`` and ``_``."""
    if not name or len(name) > 64 or not set(name) <= _NAME_CHARACTERS:
        raise _refused(f"{what} of up to 64 lowercase letters, digits, '-' and '_'.", param)


def read_bundle(uploaded: Sequence[tuple[str, bytes]]) -> Bundle:
    """A skill from its upload: one ``.zip``, or the files of one top-level folder."""
    if not uploaded:
        raise _refused("Upload the skill's files (a directory's files, or one zip).")
    single_zip = len(uploaded) == 1 and uploaded[0][0].lower().endswith(".zip")
    files = _from_zip(uploaded[0][1]) if single_zip else _from_files(uploaded)
    tops = {path.parts[0] for path in files}
    if len(tops) != 1 or any(len(path.parts) < 2 for path in files):
        raise _refused("A skill is one top-level folder holding a SKILL.md and its other files.")
    [top] = tops
    manifest = files.get(PurePosixPath(top, "SKILL.md"))
    if manifest is None:
        raise _refused(f"The folder {top!r} has no SKILL.md.")
    name, description = _front_matter(manifest.decode("utf-8", errors="replace"))
    packed = io.BytesIO()
    with zipfile.ZipFile(packed, "w", zipfile.ZIP_DEFLATED) as archive:
        for path, data in sorted(files.items()):
            archive.writestr(str(PurePosixPath(name, *path.parts[1:])), data)
    return Bundle(name, description, packed.getvalue())


def mounted_files(bundles: Sequence[Bundle]) -> dict[str, dict[PurePosixPath, bytes]]:
    """Each skill's files by its name, as a container mounts them."""
    return {bundle.name: unpack(bundle.archive) for bundle in bundles}


def unpack(archive: bytes) -> dict[PurePosixPath, bytes]:
    """A stored (or inline) skill's files by their paths inside its folder, checked as an upload's are."""
    return {PurePosixPath(*path.parts[1:]): data for path, data in _from_zip(archive).items() if len(path.parts) > 1}
