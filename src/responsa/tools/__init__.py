"""Tools the server runs itself: MCP servers (``{"type": "mcp"}``)."""

from ._mcp import CallOutcome, McpClient, McpConnector
from ._mcp_policy import UrlPolicy
from ._mcp_simulated import SimulatedMcp

__all__ = ["CallOutcome", "McpClient", "McpConnector", "SimulatedMcp", "UrlPolicy"]
