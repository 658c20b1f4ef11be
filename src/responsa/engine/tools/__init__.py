"""Tool kinds the client runs, each a module behind one protocol (:class:`ClientToolKind`), found
through a registry by tool ``type`` and item ``type``; third-party kinds register through the
``responsa.tool_kinds`` entry-point group. See docs/architecture.md, "Adding a tool kind"."""

from ._kind import ClientRoute, ClientToolKind, ClientTools, OpenCall, Where
from ._plan import client_items, open_call, plan_client_tools
from ._registry import ENTRY_POINT_GROUP, kind_for_item, kind_for_tool, kind_named, register_kind

__all__ = [
    "ENTRY_POINT_GROUP",
    "ClientRoute",
    "ClientToolKind",
    "ClientTools",
    "OpenCall",
    "Where",
    "client_items",
    "kind_for_item",
    "kind_for_tool",
    "kind_named",
    "open_call",
    "plan_client_tools",
    "register_kind",
]
