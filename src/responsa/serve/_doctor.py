"""``responsa doctor``: what a user runs when something is off. The interpreter and the packages (with
the lock's version where the installed one differs), every capability a start would find with its
reason and fix, the store's schema, the models it would serve. Non-zero when a default capability is off."""

from __future__ import annotations

import re
import sys
from importlib import metadata
from pathlib import Path
from typing import Any

import anyio
import click

from ._diagnosis import Diagnosis, diagnose

__all__ = ["report"]

LOCK = Path(__file__).resolve().parents[2] / "requirements" / "lock.txt"
"""The lock of a source checkout (``./install.sh`` installs from it); absent where responsa is a library."""

_PINNED = re.compile(r"^([A-Za-z0-9._-]+)==([^\s;\\]+)", re.MULTILINE)
_NAME = re.compile(r"^[A-Za-z0-9._-]+")


def _normal(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def locked_versions(text: str) -> dict[str, set[str]]:
    """Each package a lock pins, with its versions (one per environment marker)."""
    found: dict[str, set[str]] = {}
    for name, version in _PINNED.findall(text):
        found.setdefault(_normal(name), set()).add(version)
    return found


def _packages() -> list[str]:
    """responsa's own dependencies as installed, the lock's version beside one that differs."""
    locked = locked_versions(LOCK.read_text()) if LOCK.is_file() else {}
    lines = []
    for requirement in metadata.requires("responsa") or []:
        found = _NAME.match(requirement)
        if "extra ==" in requirement or found is None:
            continue
        name = found.group(0)
        try:
            version = metadata.version(name)
        except metadata.PackageNotFoundError:
            version = "MISSING"
        pinned = locked.get(_normal(name), set())
        differs = f"  (lock: {', '.join(sorted(pinned))})" if pinned and version not in pinned else ""
        lines.append(f"  {name} {version}{differs}")
    return lines


def _capabilities(diagnosis: Diagnosis) -> list[str]:
    width = max(len(capability.name) for capability in diagnosis.capabilities)
    lines = []
    for capability in diagnosis.capabilities:
        state = "on " if capability.on else ("OFF" if capability.default else "off")
        lines.append(f"  {state}  {capability.name:<{width}}  {capability.detail}")
        if capability.fix and not capability.on:
            lines.append(f"       {'':<{width}}  fix: {capability.fix}")
    return lines


def report(settings: Any) -> None:
    """Print the diagnosis of a server with ``settings``; exit 1 when a default capability is off."""
    diagnosis = anyio.run(diagnose, settings)
    lock = f"the lock: {LOCK}" if LOCK.is_file() else "no lock here (installed as a library)"
    lines = [
        f"responsa {metadata.version('responsa')} on Python {sys.version.split()[0]} ({sys.executable})",
        f"packages ({lock}):",
        *_packages(),
        "capabilities (OFF: a default one is off):",
        *_capabilities(diagnosis),
        f"models: {', '.join(diagnosis.models) or 'none'}",
    ]
    click.echo("\n".join(lines))
    if off := diagnosis.off_by_default():
        raise click.ClickException(f"{len(off)} default capabilities are off: {', '.join(off)}")
