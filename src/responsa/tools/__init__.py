"""Tools the server runs itself: MCP servers (``{"type": "mcp"}``)."""

from ._mcp import CallOutcome, McpConnector
from ._mcp_policy import UrlPolicy

__all__ = ["CallOutcome", "McpConnector", "UrlPolicy"]
