"""WebSocket mode: ``ws://host/v1/responses``, one long-lived connection, many responses in turn.

The client sends ``{"type": "response.create", ...create body...}``; the server answers with the
same events as SSE, one JSON message each. Responses run one at a time per connection (a message
that arrives meanwhile waits its turn). The connection keeps its most recent response (its context
and output) in memory, so ``previous_response_id`` continues a ``store: false`` response without
the store; a continuation that fails evicts it. Errors are ``{"type": "error", "status", "error"}``
messages (with the SDK's flat ``code``/``message``/``param`` too) and the connection stays open.
After ``websocket_max_age_secs`` the server sends ``websocket_connection_limit_reached`` and closes.
The API key comes from the handshake (the gate checks it like any request's); rate limits apply
to each ``response.create``. As OpenAI does, a message may say ``stream: true`` and carry fields
this server does not know; ``generate: false`` (Codex's prewarm) makes the response and its context
without calling the model, so its id continues the chain.
"""

from __future__ import annotations

import json
import logging
import time
from contextlib import aclosing
from dataclasses import dataclass, field
from typing import Any

import anyio
from pydantic import ValidationError
from starlette.websockets import WebSocket, WebSocketDisconnect

from responsa.protocol import CreateResponseRequest, InvalidRequest, Item, ResponsaError

from ._errors import invalid_from_validation
from ._services import services

__all__ = ["responses_socket"]

logger = logging.getLogger(__name__)

_NOT_ON_A_SOCKET = ("background",)
"""Fields a ``response.create`` message cannot carry: a socket has no background responses."""
_LIMIT_REACHED = InvalidRequest(
    "This WebSocket connection reached its maximum age; open a new connection to continue.",
    code="websocket_connection_limit_reached",
)


@dataclass
class _Connection:
    """What one socket remembers: its latest response's context and output, by response id."""

    tenant: str
    last: dict[str, list[Item]] = field(default_factory=dict)

    def history(self, request: CreateResponseRequest) -> list[Item] | None:
        previous = request.previous_response_id
        return self.last.get(previous) if previous is not None else None

    def keep(self, response_id: str, items: list[Item]) -> None:
        self.last = {response_id: items}

    def evict(self, response_id: str | None) -> None:
        if response_id is not None:
            self.last.pop(response_id, None)


def error_message(error: ResponsaError) -> dict[str, Any]:
    """The spec's WebSocket error envelope, plus the flat fields the OpenAI SDK reads and the
    ``status_code`` older Codex builds read."""
    body = error.to_body()["error"]
    body["code"] = body["code"] or body["type"]  # the spec requires a code string here
    status = error.status_code
    return {**body, "type": "error", "status": status, "status_code": status, "error": body, "sequence_number": 0}


def _parse(text: str, defaults: dict[str, Any] | None) -> tuple[CreateResponseRequest, bool]:
    """The create request a message carries, and whether the model is to answer it (``generate``).

    ``stream: true`` is accepted, as OpenAI accepts it (Codex and the Agents SDK send it; the Open
    Responses text says clients must not): every response on a socket streams. ``stream: false``,
    which cannot be honoured here, is a 400."""
    try:
        message = json.loads(text)
    except ValueError:
        raise InvalidRequest("The message is not valid JSON.", code="invalid_json") from None
    if not isinstance(message, dict) or message.get("type") != "response.create":
        kind = message.get("type") if isinstance(message, dict) else None
        raise InvalidRequest(
            f"Unsupported message type {kind!r}: this socket takes 'response.create'.",
            param="type",
            code="invalid_value",
        )
    for name in _NOT_ON_A_SOCKET:
        if name in message:
            raise InvalidRequest(f"'{name}' cannot be sent on a WebSocket.", param=name, code="unsupported_parameter")
    if message.get("stream", True) is not True:
        raise InvalidRequest(
            "'stream' can only be true on a WebSocket: every response streams.", param="stream", code="invalid_value"
        )
    generate = message.pop("generate", True)
    if not isinstance(generate, bool):
        raise InvalidRequest("'generate' must be a boolean.", param="generate", code="invalid_type")
    del message["type"]
    try:
        request = CreateResponseRequest.model_validate({**(defaults or {}), **message, "stream": True})
    except ValidationError as exc:
        raise invalid_from_validation(exc) from None
    return request, generate


async def _serve_one(socket: WebSocket, connection: _Connection, text: str) -> None:
    """Run one ``response.create`` to its end, sending its events; errors become error messages."""
    made = services(socket)
    service, limiter = made.responses.for_tenant(connection.tenant), made.limiter
    previous: str | None = None
    try:
        request, generate = _parse(text, made.limits.create_defaults)
        previous = request.previous_response_id
        await limiter.admit(connection.tenant)
        run = await service.start(request, history=connection.history(request), generate=generate)
        async with aclosing(service.events(run)) as batches:  # a client gone mid-way ends the run now
            async for events in batches:
                for event in events:
                    await socket.send_text(run.event_json(event).decode())
    except ResponsaError as error:
        connection.evict(previous)
        await socket.send_text(json.dumps(error_message(error)))
        return
    if run.response.status in ("completed", "incomplete"):
        connection.keep(run.response.id, [*run.ctx.prior, *run.response.output])
    else:
        connection.evict(previous)


async def responses_socket(socket: WebSocket) -> None:
    """One WebSocket connection, from accept to close."""
    await socket.accept()
    connection = _Connection(tenant=str(socket.state.tenant))
    deadline = time.monotonic() + services(socket).limits.websocket_max_age
    try:
        while True:
            text: str | None = None
            with anyio.move_on_after(max(deadline - time.monotonic(), 0)):
                text = await socket.receive_text()
            if text is not None:
                await _serve_one(socket, connection, text)
            if time.monotonic() >= deadline:
                await socket.send_text(json.dumps(error_message(_LIMIT_REACHED)))
                await socket.close(code=1000, reason="websocket_connection_limit_reached")
                return
    except WebSocketDisconnect:
        logger.debug("WebSocket client went away")
