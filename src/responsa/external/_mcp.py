"""The MCP client side, on the official ``mcp`` SDK: list a server's tools, call one.

Every operation opens its own session (streamable HTTP, or SSE for URLs ending in ``/sse``) inside a
deadline, so a broken or slow server costs one error item, never a hung response. Failures are
returned as OpenAI-shaped ``error`` objects rather than raised.

The SDK is imported on first use: it weighs about 30 MB of memory, which a server whose clients
never send MCP tools should not carry.
"""

from __future__ import annotations

import json
import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

import anyio

from responsa import tracing
from responsa.protocol import McpTool, McpToolInfo

from ._mcp_policy import UrlPolicy

if TYPE_CHECKING:
    from mcp import Client

__all__ = ["CallOutcome", "McpClient", "McpConnector"]

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class CallOutcome:
    output: str | None = None
    error: dict[str, Any] | None = None


class McpClient(Protocol):
    """What runs a request's MCP tools: the real connector, or the simulator's stand-in."""

    async def list_tools(self, server: McpTool) -> tuple[list[McpToolInfo], str | None]: ...

    async def call_tool(self, server: McpTool, name: str, arguments: str) -> CallOutcome: ...


class McpConnector:
    """Talks to MCP servers with per-operation deadlines."""

    def __init__(self, call_timeout: float = 30.0, list_timeout: float = 15.0, policy: UrlPolicy | None = None) -> None:
        self.call_timeout = call_timeout
        self.list_timeout = list_timeout
        self.policy = policy or UrlPolicy()
        """Which server_urls requests may name (checked when a request is validated), checked again before
        every HTTP request an MCP client sends (redirects included)."""

    async def list_tools(self, server: McpTool) -> tuple[list[McpToolInfo], str | None]:
        """The server's tools, or ``([], reason)`` when it cannot be listed."""
        with tracing.span("mcp list_tools", {"mcp.server.label": server.server_label}) as span:
            tools, error = await self._list_tools(server)
            if span is not None:
                span.set_attribute("mcp.tools", len(tools))
                if error:
                    span.set_attribute("error.type", error)
            return tools, error

    async def _list_tools(self, server: McpTool) -> tuple[list[McpToolInfo], str | None]:
        try:
            with anyio.fail_after(self.list_timeout):
                async with _client(server, self.policy) as client:
                    listed = await client.list_tools()
        except TimeoutError:
            return [], f"Listing the tools of {server.server_label!r} timed out after {self.list_timeout:g}s."
        except Exception as exc:  # any transport or protocol failure becomes the item's error
            logger.warning("mcp list_tools %s failed: %r", server.server_label, exc)
            return [], f"Listing the tools of {server.server_label!r} failed: {_describe(exc)}"
        tools = [
            McpToolInfo(
                name=tool.name,
                description=tool.description,
                input_schema=dict(tool.input_schema or {"type": "object"}),
                annotations=tool.annotations.model_dump(exclude_none=True) if tool.annotations else None,
            )
            for tool in listed.tools
        ]
        logger.info("mcp list_tools %s: %d tools", server.server_label, len(tools))
        return tools, None

    async def call_tool(self, server: McpTool, name: str, arguments: str) -> CallOutcome:
        attributes = {"mcp.server.label": server.server_label, "gen_ai.tool.name": name}
        with tracing.span(f"mcp call {name}", attributes) as span:
            outcome = await self._call_tool(server, name, arguments)
            if span is not None and outcome.error is not None:
                span.set_attribute("error.type", str(outcome.error.get("type")))
            return outcome

    async def _call_tool(self, server: McpTool, name: str, arguments: str) -> CallOutcome:
        try:
            parsed = json.loads(arguments or "{}")
        except json.JSONDecodeError as exc:
            return CallOutcome(error={"type": "mcp_protocol_error", "code": -32602, "message": f"Invalid JSON: {exc}"})
        try:
            with anyio.fail_after(self.call_timeout):
                async with _client(server, self.policy) as client:
                    result = await client.call_tool(name, parsed if isinstance(parsed, dict) else {})
        except TimeoutError:
            message = f"The call to {name!r} timed out after {self.call_timeout:g}s."
            return CallOutcome(error={"type": "mcp_protocol_error", "code": -32001, "message": message})
        except Exception as exc:  # transport or protocol failure: the model gets to know
            logger.warning("mcp call %s.%s failed: %r", server.server_label, name, exc)
            return CallOutcome(error=_error_of(exc))
        content = [block.model_dump(mode="json", exclude_none=True) for block in getattr(result, "content", [])]
        if getattr(result, "is_error", False):
            return CallOutcome(error={"type": "mcp_tool_execution_error", "content": content})
        return CallOutcome(output=_output_text(content, getattr(result, "structured_content", None)))


@asynccontextmanager
async def _client(server: McpTool, policy: UrlPolicy) -> AsyncIterator[Client]:
    """A connected, initialised session; everything it opened is closed on exit. Every HTTP request
    it sends is checked by ``policy`` first."""
    from mcp import Client
    from mcp.client.sse import sse_client
    from mcp.client.streamable_http import streamable_http_client
    from mcp.shared._httpx_utils import create_mcp_http_client

    url = server.server_url or ""
    headers = dict(server.headers or {})
    if server.authorization and not any(name.lower() == "authorization" for name in headers):
        headers["Authorization"] = f"Bearer {server.authorization}"
    tracing.inject(headers)

    def guarded_client(headers: dict[str, str] | None = None, timeout: Any = None, auth: Any = None) -> Any:
        client = create_mcp_http_client(headers=headers, timeout=timeout, auth=auth)
        client.event_hooks = {"request": [policy.guard], "response": []}
        return client

    if url.rstrip("/").endswith("/sse"):
        async with Client(sse_client(url, headers=headers, httpx_client_factory=guarded_client)) as client:
            yield client
        return
    async with guarded_client(headers=headers) as http_client:
        async with Client(streamable_http_client(url, http_client=http_client)) as client:
            yield client


def _output_text(content: list[dict[str, Any]], structured: Any) -> str:
    texts = [block.get("text", "") for block in content if block.get("type") == "text"]
    if texts:
        return "\n".join(texts)
    if structured is not None:
        return json.dumps(structured)
    return json.dumps(content)


def _describe(exc: BaseException) -> str:
    if isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        return _describe(exc.exceptions[0])
    return str(exc) or type(exc).__name__


def _error_of(exc: BaseException) -> dict[str, Any]:
    if isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        return _error_of(exc.exceptions[0])
    code = getattr(getattr(exc, "error", None), "code", None)
    if isinstance(code, int):
        return {"type": "mcp_protocol_error", "code": code, "message": _describe(exc)}
    status = getattr(getattr(exc, "response", None), "status_code", None)
    return {"type": "http_error", "code": status if isinstance(status, int) else 503, "message": _describe(exc)}
