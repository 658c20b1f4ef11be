"""Plug-ins: the objects distributions name under an entry-point group (tool kinds, request features),
each an object or a callable that makes one. One that cannot be loaded stops the start, said with its
entry point, rather than a server serving without it."""

from __future__ import annotations

import logging
from collections.abc import Callable
from importlib.metadata import entry_points
from typing import Any

__all__ = ["load_plugins"]

logger = logging.getLogger(__name__)


def load_plugins(group: str, what: str, is_made: Callable[[Any], bool], take: Callable[[Any], None]) -> None:
    """Give ``take`` the object of each of ``group``'s entry points (``what`` names them in messages); an
    entry point naming a class, or a callable ``is_made`` does not accept as the object itself, is called
    to make it. One that cannot be loaded, or that ``take`` refuses, stops the start."""
    for entry in entry_points(group=group):
        try:
            loaded = entry.load()
            take(loaded if is_made(loaded) and not isinstance(loaded, type) else loaded())
        except Exception as exc:
            raise RuntimeError(f"{what} plug-in {entry.name!r} ({entry.value}) could not be loaded: {exc}") from exc
        logger.info("%s plug-in %s loaded from %s", what, entry.name, entry.value)
