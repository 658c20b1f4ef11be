"""A real MCP server for the tests (the official SDK's MCPServer), served over streamable HTTP and SSE,
recording the JSON-RPC methods and headers it receives."""

from __future__ import annotations

import json
from typing import Any

import anyio
from mcp.server.mcpserver import MCPServer
from starlette.types import ASGIApp, Message, Receive, Scope, Send


def build_server() -> MCPServer:
    server = MCPServer("test-tools")

    @server.tool(description="Add two integers and return the sum.")
    def add(a: int, b: int) -> int:
        return a + b

    @server.tool(description="Weather forecast for a city.")
    def get_forecast(city: str) -> str:
        return f"Forecast for {city}: sunny, 21C"

    @server.tool(description="Wait for a number of seconds, then answer.")
    async def slow_answer(seconds: float) -> str:
        await anyio.sleep(seconds)
        return "finally"

    @server.tool(description="A tool that always breaks.")
    def explode() -> str:
        raise ValueError("kaboom")

    return server


class Recorder:
    """ASGI middleware keeping the JSON-RPC methods and the headers of each request."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app
        self.methods: list[str] = []
        self.headers: list[dict[str, str]] = []

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        self.headers.append({k.decode(): v.decode() for k, v in scope["headers"]})
        chunks: list[bytes] = []

        async def recording_receive() -> Message:
            message = await receive()
            if message["type"] == "http.request":
                chunks.append(message.get("body", b""))
                if not message.get("more_body"):
                    self._note(b"".join(chunks))
            return message

        await self.app(scope, recording_receive, send)

    def _note(self, body: bytes) -> None:
        try:
            payload: Any = json.loads(body)
        except ValueError:
            return
        for message in payload if isinstance(payload, list) else [payload]:
            if isinstance(message, dict) and "method" in message:
                self.methods.append(str(message["method"]))


def streamable_app() -> Recorder:
    return Recorder(build_server().streamable_http_app())


def sse_app() -> Recorder:
    return Recorder(build_server().sse_app())
