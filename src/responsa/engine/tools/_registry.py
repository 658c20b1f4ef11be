"""The tool kinds a server serves, as one object built at start-up (:class:`ToolRegistry`): which kind
handles a tool ``type`` and an item ``type``. The composition root gives it the built-in kinds, each
server-run one configured with its own service (``FileSearchKind(vector_stores)``), and
:func:`load_tool_registry` adds the third-party kinds of the ``responsa.tool_kinds`` entry-point
group (each entry point names a :class:`ToolKind` object, or a callable that makes one, which builds
its own services). Kinds with a ``prepare`` are run by the server (:class:`ServerToolKind`): they
plan before the model runs, in registration order, those a request names only."""

from __future__ import annotations

import logging
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from responsa.protocol import Item

from .._plugins import load_plugins
from ._kind import ServerToolKind, ToolKind

__all__ = ["ENTRY_POINT_GROUP", "ToolRegistry", "client_kinds", "hosted_phases", "load_tool_registry"]

logger = logging.getLogger(__name__)

ENTRY_POINT_GROUP = "responsa.tool_kinds"


def hosted_phases(progress: str) -> tuple[str, str, str]:
    """The phases of a hosted call's progress events, its kind's ``progress`` phase between the two
    every hosted call has."""
    return ("in_progress", progress, "completed")


class ToolRegistry:
    """Kinds by name, tool type and item type; a name or type two kinds claim is a ``ValueError``."""

    def __init__(self, kinds: Iterable[ToolKind]) -> None:
        self._by_name: dict[str, ToolKind] = {}
        self._by_tool: dict[str, ToolKind] = {}
        self._by_item: dict[str, ToolKind] = {}
        self._server: list[ServerToolKind] = []
        self._server_types: frozenset[str] = frozenset()
        """Every tool and item type of the server-run kinds: a request naming none prepares nothing."""
        self._hosted: frozenset[str] = frozenset()
        self._hosted_events: frozenset[str] = frozenset()
        self._answers: dict[type[Item], type[Item]] = {}
        self._metered: dict[str, ToolKind] = {}
        """By item type, the kinds whose calls count in the usage ledger (their ``metered``)."""
        for kind in kinds:
            self.register(kind)

    def register(self, kind: ToolKind) -> None:
        """Add ``kind`` (at start-up: the registry is read-only once the server serves)."""
        taken = [f"name {kind.name!r}"] if kind.name in self._by_name else []
        taken += [f"tool type {t!r}" for t in kind.tool_types if t in self._by_tool]
        taken += [f"item type {t!r}" for t in kind.item_types if t in self._by_item]
        if taken:
            raise ValueError(f"tool kind {kind.name!r}: {', '.join(taken)} already registered")
        self._by_name[kind.name] = kind
        self._by_tool.update(dict.fromkeys(kind.tool_types, kind))
        self._by_item.update(dict.fromkeys(kind.item_types, kind))
        if callable(getattr(kind, "prepare", None)):
            self._server.append(kind)  # type: ignore[arg-type]  # it has the ServerToolKind's prepare
            self._server_types |= frozenset((*kind.tool_types, *kind.item_types))
        if (progress := getattr(kind, "progress", None)) is not None:
            self._hosted |= frozenset(kind.tool_types)
            self._hosted_events |= {f"response.{item_type}.{phase}" for item_type in kind.item_types
                                    for phase in hosted_phases(progress)}  # fmt: skip
        self._answers.update(getattr(kind, "answers", {}))
        if callable(getattr(kind, "metered", None)):
            self._metered.update(dict.fromkeys(kind.item_types, kind))

    def for_tool(self, tool_type: str) -> ToolKind | None:
        return self._by_tool.get(tool_type)

    def for_item(self, item_type: str) -> ToolKind | None:
        return self._by_item.get(item_type)

    @property
    def items(self) -> Mapping[str, ToolKind]:
        """Every item type a kind handles, with its kind: for a pass over a whole context, which looks
        each item up (a method call per item costs more, on every item of every turn)."""
        return self._by_item

    def named(self, name: str) -> ToolKind:
        return self._by_name[name]

    def kinds(self) -> list[ToolKind]:
        """Every kind, in registration order."""
        return list(self._by_name.values())

    def server_kinds(self, types: Iterable[str]) -> list[ServerToolKind]:
        """The server-run kinds that own one of ``types`` (tool or item types), in the order they plan."""
        named = set(types)
        if named.isdisjoint(self._server_types):  # most requests: no server-run tool, no approval
            return []
        return [kind for kind in self._server if not (named.isdisjoint(kind.tool_types) and
                                                         named.isdisjoint(kind.item_types))]  # fmt: skip

    def hosted_tool_types(self) -> frozenset[str]:
        """The tool types of the hosted kinds: those a backend may run itself and report (the simulator
        does), each saying the ``progress`` phase of its calls; where neither the backend nor the server
        runs one, the hosted-tool policy decides (``--hosted-tools``)."""
        return self._hosted

    def hosted_events(self) -> frozenset[str]:
        """The progress events of the hosted kinds' calls, ``response.<item type>.<phase>``: their names
        are the kinds' (``HostedToolEvent.type`` is any of them)."""
        return self._hosted_events

    @property
    def answers(self) -> Mapping[type[Item], type[Item]]:
        """The output item classes that must answer a call in their context, each with its call's
        class (the kinds' ``answers``)."""
        return self._answers

    def metered(self, output: Sequence[Item]) -> dict[str, int]:
        """What a response's tool calls count in the usage ledger, by usage kind (the kinds' ``metered``
        of their own items: one look at each item's type)."""
        by_kind: dict[str, list[Item]] = {}
        for item in output:
            kind = self._metered.get(item.type)
            if kind is not None:
                by_kind.setdefault(kind.name, []).append(item)
        counted: dict[str, int] = {}
        for name, items in by_kind.items():
            counted.update(self._by_name[name].metered(items))  # type: ignore[attr-defined]  # it has one
        return counted

    def statuses(self) -> dict[str, dict[str, Any]]:
        """What each server-run kind that reports one says of itself (on, off and why: ``/v1/server``)."""
        return {kind.name: status for kind in self._server if (status := getattr(kind, "status", None)) is not None}

    def id_prefix(self, item_type: str) -> str | None:
        """The prefix of a tool item's ids, as the kind that owns the item type says."""
        kind = self._by_item.get(item_type)
        return kind.item_types[item_type] if kind is not None else None


def client_kinds() -> list[ToolKind]:
    """The built-in kinds the client runs (they need no service)."""
    from . import apply_patch, custom, function, shell, tool_search

    return [function.KIND, custom.KIND, shell.LOCAL_SHELL, apply_patch.APPLY_PATCH, tool_search.TOOL_SEARCH]


def load_tool_registry(server_run: Sequence[ToolKind] = ()) -> ToolRegistry:
    """The client-run kinds, then ``server_run`` (configured by the caller), then the plug-ins' kinds.
    A plug-in that cannot be loaded, or that claims a type another kind has, stops the start."""
    registry = ToolRegistry([*client_kinds(), *server_run])
    load_plugins(ENTRY_POINT_GROUP, "tool kind", lambda loaded: hasattr(loaded, "tool_types"), registry.register)
    return registry
