"""The gate every HTTP request passes: request id, API key and tenant, rate limit, body size,
one structured log line, and the request metrics."""

from __future__ import annotations

import itertools
import logging
import os
import time
from typing import Any

from starlette.types import ASGIApp, Message, Receive, Scope, Send
from starlette.websockets import WebSocket

from responsa import tracing
from responsa.engine.projects import KeyDirectory
from responsa.protocol import AuthenticationFailed, PayloadTooLarge, PermissionDenied, ResponsaError

from ._admin_routes import is_admin_path
from ._console import is_console_path
from ._errors import error_response
from ._file_routes import is_upload
from ._limits import Limiter
from ._metrics import Metrics, route_of
from ._sse import BODY_SEND

__all__ = ["ADMIN_TENANT", "DEFAULT_TENANT", "Gate"]

logger = logging.getLogger("responsa.access")

DEFAULT_TENANT = "default"
ADMIN_TENANT = "organization"
"""What the log and the metrics name an admin key's requests by (they reach no tenant's objects)."""
_OPEN_PATHS = frozenset({"/health", "/metrics", "/openapi.json"})
_TRACE_HEADERS = ("traceparent", "tracestate")


class Gate:
    def __init__(
        self,
        app: ASGIApp,
        keys: KeyDirectory,
        limiter: Limiter,
        metrics: Metrics,
        max_body_bytes: int,
        max_upload_bytes: int | None = None,
        served_by: str | None = None,
    ) -> None:
        self.app = app
        self.keys = keys
        self.limiter = limiter
        self.metrics = metrics
        self.max_body_bytes = max_body_bytes
        self.max_upload_bytes = max_upload_bytes or max_body_bytes
        self._id_prefix = os.urandom(8).hex()
        self._served_by = () if served_by is None else ((b"x-responsa-worker", served_by.encode()),)
        """Which worker answered (its process id), where there are several."""
        self._ids = itertools.count()
        """Request ids: this server's random prefix and a count, unique as a uuid4 is, at a tenth of its cost."""

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "websocket":
            await self._socket(scope, receive, send)
            return
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = dict(scope["headers"])
        request_id = (
            headers.get(b"x-request-id", b"").decode(errors="replace")[:128]
            or f"req_{self._id_prefix}{next(self._ids):016x}"
        )
        started = time.perf_counter()
        status = {"code": 500}
        scope[BODY_SEND] = send

        async def send_with_id(message: Message) -> None:
            if message["type"] == "http.response.start":
                status["code"] = message["status"]
                message["headers"] = [
                    *message.get("headers", []),
                    (b"x-request-id", request_id.encode()),
                    *self._served_by,
                ]
            await send(message)

        try:
            if tracing.enabled():
                await self._traced(scope, receive, send_with_id, headers, status)
            else:
                await self._serve(scope, receive, send_with_id, headers)
        finally:
            # The scope holds the send, which holds the server's request cycle, which holds the scope:
            # a reference cycle only the garbage collector would free, rarely (see cli.py), holding
            # each request's objects meanwhile (8 MB more memory on the rig).
            del scope[BODY_SEND]
            tenant = _tenant_of(scope)
            elapsed = time.perf_counter() - started
            route = route_of(scope["path"])
            self.metrics.count_request(scope["method"], route, status["code"], elapsed)
            logger.info(
                "request_id=%s tenant=%s method=%s path=%s status=%d duration_ms=%.1f",
                request_id, tenant, scope["method"], scope["path"], status["code"], elapsed * 1000,
            )  # fmt: skip

    async def _serve(self, scope: Scope, receive: Receive, send: Send, headers: dict[bytes, Any]) -> None:
        """Admit and answer the request, or refuse it."""
        try:
            scope.setdefault("state", {})["tenant"] = await self._admit(scope, headers)
            await self.app(scope, receive, send)
        except ResponsaError as refused:
            await error_response(refused)(scope, receive, send)

    async def _traced(
        self, scope: Scope, receive: Receive, send: Send, headers: dict[bytes, Any], status: dict[str, int]
    ) -> None:
        """``_serve`` in a server span that continues the caller's trace (``traceparent``)."""
        incoming = {name: headers[name.encode()].decode() for name in _TRACE_HEADERS if name.encode() in headers}
        attributes = {"http.request.method": scope["method"], "url.path": scope["path"]}
        name = f"{scope['method']} {route_of(scope['path'])}"
        with tracing.span(name, attributes, tracing.extract(incoming), kind="SERVER") as span:
            await self._serve(scope, receive, send, headers)
            if span is not None:
                span.set_attributes({"http.response.status_code": status["code"], "responsa.tenant": _tenant_of(scope)})

    async def _socket(self, scope: Scope, receive: Receive, send: Send) -> None:
        """A WebSocket handshake: the API key of its headers names the tenant (limits apply per message).
        A refused handshake gets the HTTP error response where the server can send one, else a close."""
        try:
            tenant = self._tenant(dict(scope["headers"]), is_admin_path(scope["path"]))
        except ResponsaError as refused:
            socket = WebSocket(scope, receive, send)
            try:
                await socket.send_denial_response(error_response(refused))
            except RuntimeError:  # the server has no denial-response extension
                await socket.close(code=1008, reason=refused.message[:120])
            return
        scope.setdefault("state", {})["tenant"] = tenant
        logger.info("websocket tenant=%s path=%s", tenant, scope["path"])
        await self.app(scope, receive, send)

    async def _admit(self, scope: Scope, headers: dict[bytes, Any]) -> str:
        """The tenant of the request, or the error refusing it (401, 403, 429, 413)."""
        if scope["path"] in _OPEN_PATHS:
            return DEFAULT_TENANT
        admin_path = is_admin_path(scope["path"])
        try:
            tenant = self._tenant(headers, admin_path)
        except AuthenticationFailed:
            if is_console_path(scope["path"]):  # checked only here: an API request pays nothing for it
                return DEFAULT_TENANT
            raise
        length = headers.get(b"content-length")
        if length is not None and length.isdigit() and int(length) > self.max_body_bytes:
            limit = self.max_upload_bytes if is_upload(scope["method"], scope["path"]) else self.max_body_bytes
            if int(length) > limit:
                raise PayloadTooLarge(f"The request body is larger than {limit} bytes.")
        if not admin_path:  # an admin key's (nothing else gets there): no project's limits
            await self.limiter.admit(tenant)
        return tenant

    def _tenant(self, headers: dict[bytes, Any], admin_path: bool) -> str:
        """The tenant whose API key the ``Authorization`` header carries (``ADMIN_TENANT`` for an admin
        key, which reaches the Admin API's paths and only those); 401 without a known key where keys
        are required (a server that knows none is open, but for the Admin API). ``admin_path``: the
        request is for the Admin API."""
        if not self.keys.required and not admin_path:
            return DEFAULT_TENANT
        header = headers.get(b"authorization", b"")
        token = header[7:].strip() if header[:7].lower() == b"bearer " else b""
        principal = self.keys.resolve(token) if token else None
        if principal is None:
            if admin_path and not self.keys.has_admin:
                raise AuthenticationFailed("The Admin API needs an admin key: start the server with --admin-key, "
                                           "or make one with `responsa admin-key`.")  # fmt: skip
            raise AuthenticationFailed(
                "Incorrect API key provided. Pass a configured key as 'Authorization: Bearer <key>'."
                if token
                else "You didn't provide an API key. Use 'Authorization: Bearer <key>'."
            )
        refused = None
        if principal.tenant is None and not admin_path:
            refused = PermissionDenied("An admin key may only be used for the Admin API (/v1/organization/...): "
                                       "use a project's key.", code="admin_key_not_allowed")  # fmt: skip
        if principal.tenant is not None and admin_path:
            refused = PermissionDenied("You have insufficient permissions for this operation: the Admin API "
                                       "needs an admin key.", code="insufficient_permissions")  # fmt: skip
        if refused is not None:
            self.keys.audit.denied(principal.tenant, refused.code or "", refused.message)
            raise refused
        return principal.tenant or ADMIN_TENANT


def _tenant_of(scope: Scope) -> str:
    """The tenant the request was admitted for (the default before admission)."""
    tenant: str = scope.get("state", {}).get("tenant", DEFAULT_TENANT)
    return tenant
