"""Server-sent events framing: ``event:`` equals the JSON ``type``; the stream ends with ``[DONE]``."""

from __future__ import annotations

from collections.abc import AsyncIterator

from responsa.protocol import StreamEvent

__all__ = ["DONE", "encode_event", "sse_stream"]

DONE = b"data: [DONE]\n\n"


def encode_event(event: StreamEvent) -> bytes:
    """One SSE frame (no ``id:`` line, as Open Responses asks)."""
    return b"event: " + event.type.encode() + b"\ndata: " + event.model_dump_json().encode() + b"\n\n"


async def sse_stream(events: AsyncIterator[StreamEvent]) -> AsyncIterator[bytes]:
    """Frames for ``events``, then the ``[DONE]`` marker."""
    async for event in events:
        yield encode_event(event)
    yield DONE
