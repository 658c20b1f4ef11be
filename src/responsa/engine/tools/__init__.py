"""Tool kinds, each a module behind one protocol (:class:`ToolKind`), found through the server's
:class:`ToolRegistry` by tool ``type`` and item ``type``: the ones the client runs (function, custom,
shell, apply_patch, tool_search) and the ones the server runs (:class:`ServerToolKind`: mcp, file_search,
web_search, image_generation, code_interpreter, each configured with its service); third-party kinds
register through the ``responsa.tool_kinds`` entry-point group. See docs/architecture.md, "Adding a tool kind"."""

from ._annotations import Annotations
from ._answers import answer_stub
from ._choice import ToolPolicy, after_forced_round, check_tool_choice, held_to_choice, resolve_tool_choice
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
    ToolSetup,
    Where,
    chosen_by_name,
)
from ._plan import Replays, open_call, plan_client_tools, prepare_server_tools
from ._registry import ENTRY_POINT_GROUP, ToolRegistry, client_kinds, load_tool_registry
from ._schema import check_schema

__all__ = [
    "ENTRY_POINT_GROUP",
    "Annotations",
    "Closed",
    "OpenCall",
    "Recorded",
    "Replay",
    "Replays",
    "Route",
    "ServerContext",
    "ServerRun",
    "ServerToolKind",
    "ToolKind",
    "ToolPlan",
    "ToolPolicy",
    "ToolRegistry",
    "ToolSetup",
    "Where",
    "after_forced_round",
    "answer_stub",
    "check_schema",
    "check_tool_choice",
    "chosen_by_name",
    "client_kinds",
    "held_to_choice",
    "hosted_event",
    "load_tool_registry",
    "open_call",
    "plan_client_tools",
    "prepare_server_tools",
    "reported_call",
    "resolve_tool_choice",
]
