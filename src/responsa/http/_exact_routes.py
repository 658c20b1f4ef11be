"""Requests for a fixed path (``POST /v1/responses``, ``GET /v1/models``...) go straight to their
endpoint, found by one dictionary lookup.

Starlette's way to an endpoint is three layers: its exception middleware, its router (which tries
each route's pattern in turn until one takes the method too), and the route's own wrapper; the first
and the last each wrap the request in a closure and ``send`` in another. For a JSON create that was
3.6% of its instructions (callgrind, in process). Here a table made once from the same routes sends a
request to the endpoint Starlette would have chosen, and the endpoint's failures meet the handlers
Starlette would have called; every other request (a path with parameters, a method the path lacks, a
WebSocket) goes on to Starlette unchanged.
"""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Any

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import BaseRoute, Match, Route
from starlette.types import ASGIApp, Receive, Scope, Send

__all__ = ["ExactRoutes"]

Endpoint = Callable[[Request], Awaitable[Response]]
Handler = Callable[[Request, Exception], Awaitable[Response]]


class ExactRoutes:
    """An ASGI middleware above Starlette's own, serving the routes of fixed paths itself."""

    def __init__(self, app: ASGIApp, routes: Sequence[BaseRoute], handlers: Mapping[Any, Handler]) -> None:
        """``routes``: the app's, in order; ``handlers``: the app's exception handlers. The catch-all
        (``Exception``) is not applied here: Starlette gives it to its outermost middleware, which
        still sees what this one lets through."""
        self.app = app
        self._table = _fixed_paths(routes)
        self._handlers = {kind: handler for kind, handler in handlers.items() if kind not in (500, Exception)}

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        route = self._table.get((scope["method"], scope["path"])) if scope["type"] == "http" else None
        if route is None:
            await self.app(scope, receive, send)
            return
        endpoint: Endpoint = route.endpoint
        scope.update(route=route, endpoint=endpoint, path_params={})  # as Starlette's router sets them
        request = Request(scope, receive, send)
        try:
            response = await endpoint(request)
        except Exception as exc:
            handler = next((self._handlers[kind] for kind in type(exc).__mro__ if kind in self._handlers), None)
            if handler is None:
                raise
            response = await handler(request, exc)
            exc.__traceback__ = None  # a reused exception would gather tracebacks (as Starlette does)
        await response(scope, receive, send)


def _fixed_paths(routes: Sequence[BaseRoute]) -> dict[tuple[str, str], Route]:
    """(method, path) -> route, for each route whose path has no parameters and whose endpoint is a
    coroutine function; a pair that an earlier route already takes (a pattern that matches the same
    path) is left to Starlette, so the first route that takes a request is the one that serves it."""
    table: dict[tuple[str, str], Route] = {}
    for at, route in enumerate(routes):
        if not isinstance(route, Route) or route.param_convertors or not inspect.iscoroutinefunction(route.endpoint):
            continue
        for method in route.methods or ():
            probe = {"type": "http", "method": method, "path": route.path, "root_path": ""}
            if (method, route.path) not in table and not any(
                earlier.matches(probe)[0] is Match.FULL for earlier in routes[:at]
            ):
                table[(method, route.path)] = route
    return table
