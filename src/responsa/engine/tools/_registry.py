"""Which kind handles a tool ``type`` and an item ``type``: the built-in kinds, and third-party ones
registered through the ``responsa.tool_kinds`` entry-point group (each entry point names a
:class:`ToolKind` object), loaded once, on first use. Kinds with a ``prepare`` are run by the server
(:class:`ServerToolKind`): they plan with its services before the model runs, in registration order."""

from __future__ import annotations

import logging
from collections.abc import Mapping
from importlib.metadata import entry_points

from ._kind import ServerToolKind, ToolKind

__all__ = [
    "ENTRY_POINT_GROUP",
    "id_prefix",
    "item_kinds",
    "kind_for_item",
    "kind_for_tool",
    "kind_named",
    "register_kind",
    "server_kinds",
]

logger = logging.getLogger(__name__)

ENTRY_POINT_GROUP = "responsa.tool_kinds"

_by_name: dict[str, ToolKind] = {}
_by_tool: dict[str, ToolKind] = {}
_by_item: dict[str, ToolKind] = {}
_server_kinds: list[ServerToolKind] = []
_loaded = False


def register_kind(kind: ToolKind) -> None:
    """Add ``kind``; a name, tool type or item type another kind has is a ``ValueError``."""
    _ensure_loaded()
    taken = [f"name {kind.name!r}"] if kind.name in _by_name else []
    taken += [f"tool type {t!r}" for t in kind.tool_types if t in _by_tool]
    taken += [f"item type {t!r}" for t in kind.item_types if t in _by_item]
    if taken:
        raise ValueError(f"tool kind {kind.name!r}: {', '.join(taken)} already registered")
    _by_name[kind.name] = kind
    _by_tool.update(dict.fromkeys(kind.tool_types, kind))
    _by_item.update(dict.fromkeys(kind.item_types, kind))
    if callable(getattr(kind, "prepare", None)):
        _server_kinds.append(kind)  # type: ignore[arg-type]  # it has the ServerToolKind's prepare


def _ensure_loaded() -> None:
    global _loaded
    if _loaded:
        return
    _loaded = True
    from . import (
        apply_patch,
        code_interpreter,
        custom,
        file_search,
        function,
        image_generation,
        mcp,
        shell,
        tool_search,
        web_search,
    )

    for kind in (function.KIND, custom.KIND, shell.SHELL, shell.LOCAL_SHELL, apply_patch.APPLY_PATCH,
                 tool_search.TOOL_SEARCH, mcp.KIND, file_search.KIND, web_search.KIND,
                 image_generation.KIND, code_interpreter.KIND):  # fmt: skip
        register_kind(kind)
    for entry in entry_points(group=ENTRY_POINT_GROUP):
        try:
            register_kind(entry.load())
        except Exception:  # a broken plug-in must not take the server down: it is left out, loudly
            logger.exception("tool kind plug-in %r could not be loaded", entry.value)
        else:
            logger.info("tool kind plug-in %s loaded from %s", entry.name, entry.value)


def kind_for_tool(tool_type: str) -> ToolKind | None:
    _ensure_loaded()
    return _by_tool.get(tool_type)


def kind_for_item(item_type: str) -> ToolKind | None:
    _ensure_loaded()
    return _by_item.get(item_type)


def item_kinds() -> Mapping[str, ToolKind]:
    """Every item type a kind handles, with its kind: for a pass over a whole context, which looks
    each item up (``kind_for_item`` per item costs two calls more, on every item of every turn)."""
    _ensure_loaded()
    return _by_item


def kind_named(name: str) -> ToolKind:
    _ensure_loaded()
    return _by_name[name]


def server_kinds() -> list[ServerToolKind]:
    """The kinds the server runs, in the order they plan (and their tools are offered)."""
    _ensure_loaded()
    return _server_kinds


def id_prefix(item_type: str) -> str | None:
    """The prefix of a tool item's ids, as the kind that owns the item type says."""
    kind = kind_for_item(item_type)
    return kind.item_types[item_type] if kind is not None else None
