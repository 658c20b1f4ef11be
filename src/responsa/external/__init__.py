"""Tools the server runs itself and what they reach outside it: MCP servers (``{"type": "mcp"}``), the
web (search providers and pages, for ``web_search``), the sandbox that runs code, and the URL policy
every such request passes."""

from ._egress import EgressLimits, EgressProxy, allowed_domain
from ._mcp import CallOutcome, McpClient, McpConnector
from ._mcp_policy import UrlPolicy
from ._mcp_simulated import SimulatedMcp
from ._pages import Page, PageFetcher, probe_page_extraction
from ._sandbox import (
    CommandRun,
    Execution,
    PythonSandbox,
    SandboxLimits,
    cgroups_writable,
    probe_sandbox,
    probe_sandbox_libraries,
    sweep_cgroups,
)
from ._web_search import SearchHit, SearchProvider, WebSearch, make_provider
from ._webhooks import Attempt, WebhookSender, new_secret, signature

__all__ = [
    "Attempt",
    "CallOutcome",
    "CommandRun",
    "EgressLimits",
    "EgressProxy",
    "Execution",
    "McpClient",
    "McpConnector",
    "Page",
    "PageFetcher",
    "PythonSandbox",
    "SandboxLimits",
    "SearchHit",
    "SearchProvider",
    "SimulatedMcp",
    "UrlPolicy",
    "WebSearch",
    "WebhookSender",
    "allowed_domain",
    "cgroups_writable",
    "make_provider",
    "new_secret",
    "probe_page_extraction",
    "probe_sandbox",
    "probe_sandbox_libraries",
    "signature",
    "sweep_cgroups",
]
