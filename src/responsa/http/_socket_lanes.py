"""The lanes of one WebSocket connection (``stream_id``, OpenAI's WebSocket contract of 2026-09).

A ``response.create`` may name a lane with ``stream_id`` (1 to 256 of ``[A-Za-z0-9_.-]``): the
responses of one lane run in order, lanes run side by side, and every message of a named lane
carries its ``stream_id``. A message without one goes to the default lane, whose messages carry no
``stream_id``: a client that never names a lane (the Open Responses suite, the SDKs) sees one
response at a time, as before. At most ``MAX_ACTIVE`` responses are queued or running on a
connection and at most ``MAX_NAMED_LANES`` lanes are named; past either, and for a malformed id, the
message is answered with an error at once.

Each lane remembers its latest response (context and output), so ``previous_response_id`` continues
a ``store: false`` response of any lane, and two lanes can fork one chain.
"""

from __future__ import annotations

import json
import re
from collections.abc import Awaitable, Callable, Sequence
from typing import Any

import anyio
from anyio.abc import TaskGroup
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream
from starlette.websockets import WebSocket, WebSocketDisconnect, WebSocketDisconnected

from responsa.engine import Steering, inbox_of, inject_created, inject_failure, injected, steer_failure, steer_input
from responsa.protocol import CreateResponseRequest, InvalidRequest, Item, ResponsaError

from ._services import services

__all__ = ["MAX_ACTIVE", "MAX_NAMED_LANES", "SEND_BATCH", "Lane", "SocketSession", "error_message"]

MAX_ACTIVE = 16
"""Responses queued or running on one connection at most (OpenAI's limit)."""
MAX_NAMED_LANES = 32
"""Named lanes on one connection at most; the default lane is not counted (OpenAI's limit)."""
_STREAM_ID = re.compile(r"[A-Za-z0-9_.-]{1,256}")
SEND_BATCH = "websocket.send_batch"
"""The ASGI extension that sends several text messages at once (``texts``: each one's UTF-8 bytes),
where the server announces it (``serve/_websocket_batches.py``: responsa's own uvicorn protocol)."""

Lane = str | None
"""A lane's ``stream_id``; None is the default lane."""
Serve = Callable[["SocketSession", Lane, dict[str, Any]], Awaitable[None]]


def error_message(error: ResponsaError) -> dict[str, Any]:
    """The spec's WebSocket error envelope, plus the flat fields the OpenAI SDK reads and the
    ``status_code`` older Codex builds read."""
    body = error.to_body()["error"]
    body["code"] = body["code"] or body["type"]  # the spec requires a code string here
    status = error.status_code
    return {**body, "type": "error", "status": status, "status_code": status, "error": body, "sequence_number": 0}


class SocketSession:
    """One connection's lanes, what each remembers, and the one writer of its socket."""

    def __init__(self, socket: WebSocket, tenant: str, group: TaskGroup, serve: Serve) -> None:
        self.socket = socket
        self.tenant = tenant
        self._group = group
        self._serve = serve
        self._lanes: dict[Lane, MemoryObjectSendStream[dict[str, Any]]] = {}
        self._active = 0
        self._writing = anyio.Lock(fast_acquire=True)
        """The socket's one writer at a time. Taken free, it lets no other task run first (anyio's
        default yields to the event loop on every acquire: a trip through the loop per batch sent)."""
        self._batches = SEND_BATCH in socket.scope.get("extensions", {})
        self._latest: dict[Lane, tuple[str, list[Item]]] = {}
        self.gone = False
        """The client went away: whatever runs for it stops, and nothing more is sent."""
        self.steering = Steering()

    def leave(self) -> None:
        """The client went away: stop every lane now."""
        self.gone = True
        self._group.cancel_scope.cancel()

    async def send(self, lane: Lane, text: str) -> None:
        """Send one message (a JSON object) of ``lane``, carrying its ``stream_id`` if it has one."""
        await self.send_all(lane, (text.encode(),))

    async def send_all(self, lane: Lane, texts: Sequence[bytes]) -> None:
        """Send messages of ``lane`` (the events of one batch, JSON objects in UTF-8, as the encoder
        makes them) in a row, taking the socket once."""
        if lane is not None:
            named = b'{"stream_id":' + json.dumps(lane).encode() + b","
            texts = [named + text[1:] for text in texts]
        async with self._writing:
            if self._batches:  # the ASGI send itself: Starlette's checks know no extension
                try:
                    await self.socket._send({"type": SEND_BATCH, "texts": texts})
                except OSError:  # as Starlette answers a client gone while sending
                    raise WebSocketDisconnect(code=1006) from None
                return
            send = self.socket.send_text
            for text in texts:
                await send(text.decode())

    async def send_error(self, lane: Lane, error: ResponsaError) -> None:
        await self.send(lane, json.dumps(error_message(error)))

    async def send_json(self, lane: Lane, message: dict[str, Any]) -> None:
        await self.send(lane, json.dumps(message))

    async def dispatch(self, text: str) -> None:
        """Queue a message on its lane; one that no lane can take is answered with an error now."""
        try:
            message = json.loads(text)
        except ValueError:
            await self.send_error(None, InvalidRequest("The message is not valid JSON.", code="invalid_json"))
            return
        now = _NOW.get(str(message.get("type"))) if isinstance(message, dict) else None
        if now is not None:  # for a response running now: it waits in no lane
            await now(self, message)
            return
        lane = message.pop("stream_id", None) if isinstance(message, dict) else None
        try:
            queue = self._lane(lane)
        except ResponsaError as error:
            await self.send_error(lane if isinstance(lane, str) and _STREAM_ID.fullmatch(lane) else None, error)
            return
        self._active += 1
        queue.send_nowait(message if isinstance(message, dict) else {"type": None})

    async def _steer(self, message: dict[str, Any]) -> None:
        """Accept steering input for a running response (see ``engine/responses/run/_steering``), or say why not."""
        target, given = message.get("previous_response_id"), message.get("input")
        steering_input = steer_input(given)
        if set(message) - {"type", "previous_response_id", "input"} or steering_input is None:
            why = "A steer takes only 'previous_response_id' and 'input': a string or user messages."
            await self.send_json(None, steer_failure(target, given, "invalid_input", why))
            return
        running = self.steering.running.get(target) if isinstance(target, str) else None
        outcome = self.steering.queue(target, steering_input) if isinstance(target, str) else "response_not_found"
        if outcome == "response_not_active":  # it is not running: it ended here, or this socket never ran it
            ended = any(kept == target for kept, _items in self._latest.values())
            outcome = "response_already_completed" if ended else "response_not_found"
        if isinstance(outcome, str):
            await self.send_json(
                None, steer_failure(target, given, outcome, f"The response cannot be steered ({outcome}).")
            )
            return
        lane = running[0] if running is not None else None
        await self.send_json(lane, outcome.accepted())

    async def _interrupt(self, message: dict[str, Any]) -> None:
        """Interrupt a response running on this connection; its own events say the rest (from
        ``response.interrupt.accepted`` to ``response.incomplete``)."""
        target = message.get("response_id")
        if set(message) != {"type", "response_id", "mode"} or message.get("mode") != "discard_partial_items" \
                or not isinstance(target, str):  # fmt: skip
            why = "A 'response.interrupt' takes 'response_id' and 'mode': 'discard_partial_items'."
            await self.send_error(None, InvalidRequest(why, param="mode", code="invalid_value"))
            return
        if self.steering.interrupt(target) or any(kept == target for kept, _items in self._latest.values()):
            return  # interrupted; or it ended first here, and its terminal event settles it
        why = "The response to interrupt is not active on this connection."
        await self.send_error(None, InvalidRequest(why, param="response_id", code="response_not_found"))

    async def _inject(self, message: dict[str, Any]) -> None:
        """Hand a running response the client's outputs for the calls its agents wait on
        (``response.inject.created``), or say why not (``response.inject.failed``)."""
        target, given = message.get("response_id"), message.get("input")
        running = self.steering.running.get(target) if isinstance(target, str) else None
        inbox = inbox_of(running[1]) if running is not None else None
        if running is None or inbox is None or not isinstance(target, str):
            if any(kept == target for kept, _items in self._latest.values()):
                code, why = "response_already_completed", "The response has ended: its input cannot be injected."
            else:
                code, why = "response_not_found", "No response on this connection waits for injected input."
            await self.send_json(None, inject_failure(target, given, code, why))
            return
        items = injected(given, services(self.socket).tools.id_prefix)
        if items is None:
            why = "'input' must be a list of tool call outputs (or approval responses) for calls the response waits on."
            await self.send_error(running[0], InvalidRequest(why, param="input", code="invalid_value"))
            return
        inbox.deliver(items)
        await self.send_json(running[0], inject_created(target))

    def _lane(self, lane: Any) -> MemoryObjectSendStream[dict[str, Any]]:
        if lane is not None and not (isinstance(lane, str) and _STREAM_ID.fullmatch(lane)):
            raise InvalidRequest(
                "'stream_id' must be 1 to 256 letters, digits, '_', '.' or '-'.",
                param="stream_id",
                code="invalid_stream_id",
            )
        if self._active >= MAX_ACTIVE:
            raise InvalidRequest(
                f"This connection has {MAX_ACTIVE} responses queued or running; wait for one to end.",
                param="stream_id",
                code="websocket_stream_limit_reached",
            )
        queue = self._lanes.get(lane)
        if queue is not None:
            return queue
        if lane is not None and sum(name is not None for name in self._lanes) >= MAX_NAMED_LANES:
            raise InvalidRequest(
                f"This connection has {MAX_NAMED_LANES} named lanes already.",
                param="stream_id",
                code="websocket_stream_limit_reached",
            )
        queue, messages = anyio.create_memory_object_stream[dict[str, Any]](MAX_ACTIVE)
        self._lanes[lane] = queue
        self._group.start_soon(self._run_lane, lane, messages)
        return queue

    async def _run_lane(self, lane: Lane, messages: MemoryObjectReceiveStream[dict[str, Any]]) -> None:
        async with messages:
            async for message in messages:
                try:
                    await self._serve(self, lane, message)
                except (WebSocketDisconnect, WebSocketDisconnected):  # the client went away: the connection ends
                    self.leave()
                    return
                finally:
                    self._active -= 1

    def close(self) -> None:
        """Take no more messages: each lane ends once it has served what it holds."""
        for queue in self._lanes.values():
            queue.close()

    def history(self, request: CreateResponseRequest) -> list[Item] | None:
        """The context and output of the response ``request`` continues, if it is a lane's latest."""
        previous = request.previous_response_id
        for response_id, items in self._latest.values():
            if response_id == previous:
                return items
        return None

    def keep(self, lane: Lane, response_id: str, items: list[Item]) -> None:
        self._latest[lane] = (response_id, items)

    def evict(self, response_id: str | None) -> None:
        """Forget a response (a continuation of it failed, as OpenAI's cache forgets it)."""
        for lane, (kept, _items) in list(self._latest.items()):
            if kept == response_id:
                del self._latest[lane]


_NOW: dict[str, Callable[[SocketSession, dict[str, Any]], Awaitable[None]]] = {
    "response.steer": SocketSession._steer,
    "response.interrupt": SocketSession._interrupt,
    "response.inject": SocketSession._inject,
}
"""The messages about a response already running, answered as they arrive rather than in a lane."""
