"""WebSocket mode: ``ws://host/v1/responses``, one long-lived connection, many responses in turn.

The client sends ``{"type": "response.create", ...create body...}``; the server answers with the
same events as SSE, one JSON message each. Responses of one lane run one at a time (a message that
arrives meanwhile waits its turn); lanes named by ``stream_id`` run side by side (see
``_socket_lanes``). Each lane keeps its most recent response (its context and output) in memory, so
``previous_response_id`` continues a ``store: false`` response without the store; a continuation
that fails evicts it. Errors are ``{"type": "error", "status", "error"}``
messages (with the SDK's flat ``code``/``message``/``param`` too) and the connection stays open.
After ``websocket_max_age_secs`` the server sends ``websocket_connection_limit_reached`` and closes.
The API key comes from the handshake (the gate checks it like any request's); rate limits apply
to each ``response.create``. As OpenAI does, a message may say ``stream: true`` and carry fields
this server does not know; ``generate: false`` (Codex's prewarm) makes the response and its context
without calling the model, so its id continues the chain.
"""

from __future__ import annotations

import contextlib
import logging
import time
from contextlib import aclosing
from typing import Any

import anyio
from pydantic import ValidationError
from starlette.websockets import WebSocket, WebSocketDisconnect, WebSocketDisconnected

from responsa.engine import Steer, inbox_of, successor_create
from responsa.protocol import CreateResponseRequest, InvalidRequest, ResponsaError

from ._errors import invalid_from_validation
from ._services import services
from ._socket_lanes import Lane, SocketSession

__all__ = ["responses_socket"]

logger = logging.getLogger(__name__)

_NOT_ON_A_SOCKET = ("background",)
"""Fields a ``response.create`` message cannot carry: a socket has no background responses."""
_LIMIT_REACHED = InvalidRequest(
    "This WebSocket connection reached its maximum age; open a new connection to continue.",
    code="websocket_connection_limit_reached",
)


def _parse(message: dict[str, Any], defaults: dict[str, Any] | None) -> tuple[CreateResponseRequest, bool]:
    """The create request a message carries, and whether the model is to answer it (``generate``).

    ``stream: true`` is accepted, as OpenAI accepts it (Codex and the Agents SDK send it; the Open
    Responses text says clients must not): every response on a socket streams. ``stream: false``,
    which cannot be honoured here, is a 400."""
    if message.get("type") != "response.create":
        raise InvalidRequest(
            f"Unsupported message type {message.get('type')!r}: this socket takes 'response.create'.",
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
    body = {**message}
    generate = body.pop("generate", True)
    if not isinstance(generate, bool):
        raise InvalidRequest("'generate' must be a boolean.", param="generate", code="invalid_type")
    del body["type"]
    try:
        request = CreateResponseRequest.model_validate({**(defaults or {}), **body, "stream": True})
    except ValidationError as exc:
        raise invalid_from_validation(exc) from None
    return request, generate


async def _serve_one(
    session: SocketSession, lane: Lane, message: dict[str, Any], committing: list[Steer] | None = None
) -> None:
    """Run one ``response.create`` to its end, sending its events; errors become error messages. A
    response steered meanwhile is followed by its successor (``committing`` its steering input)."""
    made = services(session.socket)
    service, limiter, steering = made.responses.for_tenant(session.tenant), made.limiter, session.steering
    previous: str | None = None
    held: list[Steer] = []
    try:
        request, generate = _parse(message, made.limits.create_defaults)
        previous = request.previous_response_id
        held = steering.release(previous)
        if held:  # steering input accepted while the response waited for the client goes first
            request = _revised(
                request, {"input": request.input_after([part for steer in held for part in steer.input])}
            )
        await limiter.admit(session.tenant)
        run = await service.start(request, history=session.history(request), generate=generate)
        steering.running[run.response.id] = (lane, run)
        inbox = inbox_of(run)
        if inbox is not None:  # this client can answer the calls its agents make while it runs
            inbox.open = True
        try:
            encode = run.event_json
            async with aclosing(service.events(run)) as batches:  # a client gone mid-way ends the run now
                async for events in batches:
                    await session.send_all(lane, [encode(event) for event in events])
        finally:
            steering.running.pop(run.response.id, None)
    except ResponsaError as error:
        session.evict(previous)
        for steer in [*(committing or ()), *held]:  # input the server owned and cannot commit comes back
            await session.send_json(lane, steer.failed("successor_creation_failed", error.message))
        await session.send_error(lane, error)
        return
    if run.response.status in ("completed", "incomplete"):
        session.keep(lane, run.response.id, [*run.ctx.prior, *run.response.output])
    else:
        session.evict(previous)
    steers = steering.take(run.response.id)
    if not steers or run.response.status not in ("completed", "incomplete") or run.stopping == "interrupted":
        for steer in steers:  # an interrupted response has no successor: its input comes back
            await session.send_json(lane, steer.failed("response_not_active", "The response did not finish."))
        return
    if run.builder.needs_client:  # it waits for the client: the input waits with it
        steering.hold(run.response.id, steers)
        for steer in steers:
            await session.send_json(lane, steer.pending(run.required_input()))
        return
    await _serve_one(session, lane, successor_create(message, run.response.id, steers), steers)


def _revised(request: CreateResponseRequest, changes: dict[str, Any]) -> CreateResponseRequest:
    try:
        return request.revised(changes)
    except ValidationError as exc:
        raise invalid_from_validation(exc) from None


async def responses_socket(socket: WebSocket) -> None:
    """One WebSocket connection, from accept to close: messages are read while responses run, each
    queued on its lane (see ``SocketSession``)."""
    await socket.accept()
    deadline = time.monotonic() + services(socket).limits.websocket_max_age
    async with anyio.create_task_group() as group:
        session = SocketSession(socket, str(socket.state.tenant), group, _serve_one)
        try:
            while (text := await _next_message(socket, deadline)) is not None:
                await session.dispatch(text)
        except (WebSocketDisconnect, WebSocketDisconnected):  # the latter: a lane's send saw the client go first
            session.leave()
        finally:  # the connection's age is up (the lanes finish what they hold), or the client left
            session.close()
    if session.gone:
        logger.debug("WebSocket client went away")
        return
    with contextlib.suppress(WebSocketDisconnect, WebSocketDisconnected):
        await session.send_error(None, _LIMIT_REACHED)
        await socket.close(code=1000, reason="websocket_connection_limit_reached")


async def _next_message(socket: WebSocket, deadline: float) -> str | None:
    """The next text message, or None once the connection is past its maximum age."""
    with anyio.move_on_after(max(deadline - time.monotonic(), 0)):
        return await socket.receive_text()
    return None
