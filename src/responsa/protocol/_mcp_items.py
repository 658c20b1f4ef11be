"""The items of MCP tools: listings, calls the server made, approval requests and their answers."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field

from ._base import WirePart

__all__ = ["McpApprovalRequest", "McpApprovalResponse", "McpCall", "McpListTools", "McpToolInfo"]


class McpToolInfo(WirePart):
    """A tool an MCP server offers, as listed in ``mcp_list_tools``."""

    name: str
    description: str | None = None
    input_schema: dict[str, Any] = Field(default_factory=lambda: {"type": "object"})
    annotations: dict[str, Any] | None = None


class McpListTools(WirePart):
    """The tools an MCP server offered; reused from earlier turns instead of asking again."""

    type: Literal["mcp_list_tools"] = "mcp_list_tools"
    id: str | None = None
    server_label: str
    tools: list[McpToolInfo] = Field(default_factory=list)
    error: str | None = None


class McpCall(WirePart):
    """A call the server made to an MCP tool, with its output or error."""

    type: Literal["mcp_call"] = "mcp_call"
    id: str | None = None
    server_label: str
    name: str
    arguments: str
    output: str | None = None
    error: dict[str, Any] | None = None
    """``{"type": "mcp_protocol_error" | "mcp_tool_execution_error" | "http_error", ...}``."""
    status: Literal["in_progress", "completed", "incomplete", "calling", "failed"] | None = None
    approval_request_id: str | None = None


class McpApprovalRequest(WirePart):
    """The model wants to call an MCP tool that needs the client's approval first."""

    type: Literal["mcp_approval_request"] = "mcp_approval_request"
    id: str | None = None
    server_label: str
    name: str
    arguments: str


class McpApprovalResponse(WirePart):
    """The client's answer to an ``mcp_approval_request``."""

    type: Literal["mcp_approval_response"] = "mcp_approval_response"
    id: str | None = None
    approval_request_id: str
    approve: bool
    reason: str | None = None
