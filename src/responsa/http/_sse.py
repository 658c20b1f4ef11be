"""Server-sent events framing: ``event:`` equals the JSON ``type``; the stream ends with ``[DONE]``.

Events come in batches (those ready together: a model often delivers several tokens in one network
read) and each batch goes out in one write: one write (one system call, one TCP segment for the
client to parse) per token was the largest single cost of a stream.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable, Mapping
from functools import partial

import anyio
from prometheus_client import Gauge
from starlette.requests import Request
from starlette.responses import StreamingResponse
from starlette.types import Receive, Scope, Send

from responsa.protocol import TERMINAL_EVENT_TYPES, EventJson, StreamEvent, event_json, obfuscate
from responsa.store import LoggedEvent

from ._services import services

__all__ = [
    "BODY_SEND",
    "DONE",
    "SseResponse",
    "encode_event",
    "framed_stream",
    "sse_logged",
    "sse_response",
    "sse_stream",
]

DONE = b"data: [DONE]\n\n"

BODY_SEND = "responsa.body_send"
"""The scope key of the ``send`` the gate was given, which it puts there: a stream's body chunks go
straight to it. The layers in between (the gate's own, Starlette's exception handler's and the
route's) look only at ``http.response.start``, which still passes through them all. A middleware
that changed bodies would have to go above the gate."""


def encode_event(event: StreamEvent, json: EventJson = event_json) -> bytes:
    """One SSE frame (no ``id:`` line, as Open Responses asks)."""
    return _HEADS[event.type] + json(event) + _END


class _FrameHeads(dict[str, bytes]):
    """Each event type's frame head (``event: <type>``, ``data: ``), made on first use: a stream frames
    one a token."""

    def __missing__(self, kind: str) -> bytes:
        head = b"event: " + kind.encode() + b"\ndata: "
        if len(self) < 512:  # the event types are a few dozen; the bound is a guard, not a policy
            self[kind] = head
        return head


_HEADS = _FrameHeads()
_END = b"\n\n"


def sse_stream(batches: AsyncIterator[list[StreamEvent]], json: EventJson = event_json) -> AsyncIterator[bytes]:
    """The Responses stream: each event framed as ``event:`` and ``data:`` (see :func:`framed_stream`).
    ``json`` encodes an event (a run's own encoder knows the events it encoded ahead)."""
    return framed_stream(batches, partial(_frames, json=json))


def _no_tail() -> bytes:
    return b""


async def framed_stream(
    batches: AsyncIterator[list[StreamEvent]],
    frames: Callable[[list[StreamEvent]], bytes],
    tail: Callable[[], bytes] = _no_tail,
) -> AsyncIterator[bytes]:
    """The frames of each batch of events as one chunk (none for a batch that frames to nothing), then
    ``tail()`` and the ``[DONE]`` marker: in the chunk of the batch that ends the response, which is
    then the last (see :meth:`SseResponse._stream`), or after the last batch (a cancelled response has
    no terminal event). The Responses and the Chat Completions streams share it, with their framing.

    While it waits for the next batch, a stream holds nothing of the one it sent. Kept in this frame
    across the ``yield``, a batch's parts and events raised the server's RSS at 64 streams at once on
    the rig by 16 MB and 3 MB (114 against 95 MB): far more than they weigh (most likely the allocator's
    pools and arenas that such stragglers keep from being given back or reused; see docs/performance.md)."""
    ended = False
    async for events in batches:
        if events:
            ended = events[-1].type in TERMINAL_EVENT_TYPES
            chunk = frames(events)
            del events  # see above
            if ended:
                yield chunk + tail() + DONE
            elif chunk:
                yield chunk
    if not ended:
        yield tail() + DONE


def _frames(events: list[StreamEvent], json: EventJson) -> bytes:
    """A batch's frames, joined from their parts at once (as :func:`encode_event` frames one), not
    framed one by one: one a token."""
    parts: list[bytes] = []
    for event in events:
        parts += (_HEADS[event.type], json(event), _END)
    return b"".join(parts)


async def sse_logged(batches: AsyncIterator[list[LoggedEvent]], *, obfuscating: bool = False) -> AsyncIterator[bytes]:
    """The frames of each batch of events replayed from a log (already JSON) as one chunk, then
    ``[DONE]``; delta events padded when ``obfuscating`` (``stream_options.include_obfuscation``)."""
    async for events in batches:
        if obfuscating:
            yield b"".join([_HEADS[e.type] + obfuscate(e.type, e.data.encode()) + _END for e in events])
        else:
            yield b"".join([_HEADS[event.type] + event.data.encode() + _END for event in events])
    yield DONE


class SseResponse(StreamingResponse):
    """A ``text/event-stream`` response; ``active`` counts the streams open."""

    media_type = "text/event-stream"

    def __init__(self, chunks: AsyncIterator[bytes], active: Gauge, headers: Mapping[str, str]) -> None:
        super().__init__(chunks, headers=headers)
        self._chunks = chunks
        self._active = active

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        """The stream, cut short when the client goes away (its generation stops then). Starlette
        watches for that with a task group per stream; one plain task and a cancel scope do the same
        for less (a stream cost 6% more)."""
        with anyio.CancelScope() as streaming:
            watcher = asyncio.get_running_loop().create_task(self._cancel_on_disconnect(receive, streaming))
            try:
                await self._stream(send, scope.get(BODY_SEND, send))
            finally:
                watcher.cancel()

    async def _cancel_on_disconnect(self, receive: Receive, streaming: anyio.CancelScope) -> None:
        await self.listen_for_disconnect(receive)
        streaming.cancel()

    async def _stream(self, send: Send, send_body: Send) -> None:
        """Starlette's ``stream_response``, but the body goes to ``send_body`` (see :data:`BODY_SEND`),
        and the chunk that ends with ``[DONE]`` also ends the HTTP body: one write (and one TCP segment
        for the client) fewer than an empty last chunk of its own."""
        self._active.inc()
        try:
            await send({"type": "http.response.start", "status": self.status_code, "headers": self.raw_headers})
            ended = False
            async for chunk in self._chunks:
                ended = chunk.endswith(DONE)
                await send_body({"type": "http.response.body", "body": chunk, "more_body": not ended})
            if not ended:
                await send_body({"type": "http.response.body", "body": b"", "more_body": False})
        finally:
            self._active.dec()


_SSE_HEADERS = {"cache-control": "no-cache", "x-accel-buffering": "no"}


def sse_response(request: Request, frames: AsyncIterator[bytes]) -> SseResponse:
    """The stream of ``frames``, counted among the server's active streams, never cached or buffered."""
    return SseResponse(frames, services(request).metrics.active_streams, headers=_SSE_HEADERS)
