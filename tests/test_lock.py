"""The lock ``./install.sh`` installs from (``requirements/lock.txt``, made by ``scripts/lock-refresh``):
every dependency in it, pinned with hashes, inside the ranges ``pyproject.toml`` gives library users;
and this environment, installed by the README's command, holds exactly what it pins."""

from __future__ import annotations

import re
import tomllib
from importlib import metadata
from pathlib import Path

import pytest
from packaging.markers import Marker
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

ROOT = Path(__file__).parent.parent
LOCK = ROOT / "requirements" / "lock.txt"
_ENTRY = re.compile(
    r"^([A-Za-z0-9._-]+)==(\S+?)(?: ; (.+?))? \\\n((?:\s+--hash=sha256:[0-9a-f]{64}(?: \\)?\n)+)", re.MULTILINE
)


def _entries() -> list[tuple[str, str, str | None, int]]:
    """(name, version, marker, number of hashes) of each pin in the lock."""
    return [(canonicalize_name(name), version, marker or None, hashes.count("--hash="))
            for name, version, marker, hashes in _ENTRY.findall(LOCK.read_text())]  # fmt: skip


def _declared() -> list[Requirement]:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    return [Requirement(text) for text in project["dependencies"] + project["optional-dependencies"]["dev"]]


def test_every_pin_has_hashes_and_every_line_is_a_pin() -> None:
    entries = _entries()
    pinned_lines = [line for line in LOCK.read_text().splitlines() if re.match(r"^[A-Za-z0-9]", line)]
    assert len(entries) == len(pinned_lines) > 100
    assert all(hashes >= 1 for *_, hashes in entries)


@pytest.mark.parametrize("requirement", _declared(), ids=str)
def test_the_ranges_include_what_the_lock_pins(requirement: Requirement) -> None:
    versions = [version for name, version, _, _ in _entries() if name == canonicalize_name(requirement.name)]
    assert versions, f"{requirement.name} is not in the lock: run scripts/lock-refresh"
    assert all(requirement.specifier.contains(version, prereleases=True) for version in versions), versions


def test_this_environment_holds_exactly_the_locked_versions() -> None:
    """The README's install command installs the lock (a venv with anything else fails here: refresh the
    lock, or reinstall with ./install.sh)."""
    differing = []
    for name, version, marker, _ in _entries():
        if marker is not None and not Marker(marker).evaluate():
            continue
        try:
            installed = metadata.version(name)
        except metadata.PackageNotFoundError:
            installed = "missing"
        if installed != version:
            differing.append(f"{name}: locked {version}, installed {installed}")
    assert differing == []
