"""Tool kinds, each a module behind one protocol (:class:`ToolKind`), found through a registry by tool
``type`` and item ``type``: the ones the client runs (function, custom, shell, apply_patch, tool_search)
and the ones the server runs (mcp, file_search: :class:`ServerToolKind`); third-party kinds register
through the ``responsa.tool_kinds`` entry-point group. See docs/architecture.md, "Adding a tool kind"."""

from ._annotations import Annotations
from ._answers import answer_stub
from ._hosted import hosted_event, reported_call
from ._kind import (
    Closed,
    OpenCall,
    Recorded,
    Replay,
    Route,
    ServerContext,
    ServerRun,
    ServerToolKind,
    ToolKind,
    ToolPlan,
    ToolServices,
    ToolSetup,
    Where,
    chosen_by_name,
)
from ._plan import open_call, plan_client_tools, prepare_server_tools, replayed
from ._registry import (
    ENTRY_POINT_GROUP,
    id_prefix,
    kind_for_item,
    kind_for_tool,
    kind_named,
    register_kind,
    server_kinds,
)

__all__ = [
    "ENTRY_POINT_GROUP",
    "Annotations",
    "Closed",
    "OpenCall",
    "Recorded",
    "Replay",
    "Route",
    "ServerContext",
    "ServerRun",
    "ServerToolKind",
    "ToolKind",
    "ToolPlan",
    "ToolServices",
    "ToolSetup",
    "Where",
    "answer_stub",
    "chosen_by_name",
    "hosted_event",
    "id_prefix",
    "kind_for_item",
    "kind_for_tool",
    "kind_named",
    "open_call",
    "plan_client_tools",
    "prepare_server_tools",
    "register_kind",
    "replayed",
    "reported_call",
    "server_kinds",
]
