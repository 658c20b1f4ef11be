"""MCP servers the simulator pretends to reach: a request on a simulated model may name a host the
URL policy refuses (LLMSim accepts any ``server_url`` without connecting), and gets a listing and
call results made up here. Nothing is ever sent to such a host."""

from __future__ import annotations

import json
from typing import Any

from responsa.protocol import McpTool, McpToolInfo

from ._mcp import CallOutcome

__all__ = ["SimulatedMcp"]

_QUERY_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"query": {"type": "string", "description": "What to look up."}},
    "required": ["query"],
}


class SimulatedMcp:
    """Answers ``list_tools``/``call_tool`` like :class:`McpConnector` without any connection."""

    async def list_tools(self, server: McpTool) -> tuple[list[McpToolInfo], str | None]:
        """The tools ``allowed_tools`` names, else one ``search`` tool: the only names a client gave."""
        names = sorted(server.allowed_names() or {"search"})
        about = f" ({server.server_description})" if server.server_description else ""
        return [
            McpToolInfo(
                name=name,
                description=f"{name} on the MCP server {server.server_label!r}{about}, simulated.",
                input_schema=_QUERY_SCHEMA,
            )
            for name in names
        ], None

    async def call_tool(self, server: McpTool, name: str, arguments: str) -> CallOutcome:
        """A made-up result that says what was asked, so the answer built on it can show it."""
        try:
            asked = json.loads(arguments or "{}")
        except json.JSONDecodeError:
            asked = arguments
        shown = json.dumps(asked, sort_keys=True) if not isinstance(asked, str) else asked
        return CallOutcome(output=f"Simulated result of {name} {shown} from {server.server_label!r}.")
