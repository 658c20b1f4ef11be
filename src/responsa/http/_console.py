"""The web console: static files shipped in the package, served at ``/`` with no build step.

The page holds no data of its own: everything it shows comes from the API with the key the user
typed, so the page and its assets are served without a key. Its Content-Security-Policy allows
nothing but this server, so the console cannot load or send anything elsewhere.
"""

from __future__ import annotations

from pathlib import Path

from starlette.requests import Request
from starlette.responses import FileResponse, Response
from starlette.routing import BaseRoute, Mount, Route
from starlette.staticfiles import StaticFiles
from starlette.types import Message, Receive, Scope, Send

__all__ = ["CONSOLE_PREFIX", "console_routes", "is_console_path"]

CONSOLE_PREFIX = "/console/"
_ASSETS = Path(__file__).parent / "console"
_HEADERS = {
    "content-security-policy": (
        "default-src 'self'; img-src 'self' data:; style-src 'self'; script-src 'self'; "
        "connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'"
    ),
    "x-content-type-options": "nosniff",
    "referrer-policy": "no-referrer",
    "cache-control": "no-cache",
}


def is_console_path(path: str) -> bool:
    """The page and its assets: open to every caller, as they carry no data."""
    return path == "/" or path.startswith(CONSOLE_PREFIX)


async def _page(_request: Request) -> Response:
    return FileResponse(_ASSETS / "index.html", headers=_HEADERS)


class _Assets(StaticFiles):
    """The console's scripts and styles, with the page's security headers."""

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        async def with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                extra = [(name.encode(), value.encode()) for name, value in _HEADERS.items()]
                message["headers"] = [*message.get("headers", []), *extra]
            await send(message)

        await super().__call__(scope, receive, with_headers)


def console_routes() -> list[BaseRoute]:
    return [Route("/", _page, methods=["GET"]), Mount(CONSOLE_PREFIX.rstrip("/"), _Assets(directory=_ASSETS))]
