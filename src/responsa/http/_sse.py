"""Server-sent events framing: ``event:`` equals the JSON ``type``; the stream ends with ``[DONE]``."""

from __future__ import annotations

from collections.abc import AsyncIterator

from responsa.protocol import StreamEvent
from responsa.store import LoggedEvent

__all__ = ["DONE", "encode_event", "sse_logged", "sse_stream"]

DONE = b"data: [DONE]\n\n"


def encode_event(event: StreamEvent) -> bytes:
    """One SSE frame (no ``id:`` line, as Open Responses asks)."""
    return b"event: " + event.type.encode() + b"\ndata: " + event.model_dump_json().encode() + b"\n\n"


async def sse_stream(events: AsyncIterator[StreamEvent]) -> AsyncIterator[bytes]:
    """Frames for ``events``, then the ``[DONE]`` marker."""
    async for event in events:
        yield encode_event(event)
    yield DONE


async def sse_logged(events: AsyncIterator[LoggedEvent]) -> AsyncIterator[bytes]:
    """Frames for events replayed from a log (already JSON), then ``[DONE]``."""
    async for event in events:
        yield b"event: " + event.type.encode() + b"\ndata: " + event.data.encode() + b"\n\n"
    yield DONE
