"""A stream waiting for its next batch holds nothing of the batch it sent. At 64 streams at once on
the rig, a batch's parts and events kept across the wait raised the server's RSS from 95 to 114 MB."""

from __future__ import annotations

import asyncio
import weakref
from collections.abc import AsyncIterator, Callable

import pytest

from responsa.http._sse import sse_stream
from responsa.http.chat._stream import ChatChunker, chat_sse
from responsa.protocol import OutputTextDelta, StreamEvent

Frames = Callable[[AsyncIterator[list[StreamEvent]]], AsyncIterator[bytes]]


@pytest.mark.parametrize(
    "frames",
    [sse_stream, lambda batches: chat_sse(batches, ChatChunker(include_usage=False, logprobs=False))],
    ids=["responses", "chat_completions"],
)
def test_a_waiting_stream_holds_nothing_of_the_batch_it_sent(frames: Frames) -> None:
    async def main() -> None:
        pending: list[list[StreamEvent]] = [[OutputTextDelta.of_token("msg_1", 0, f"w{n} ") for n in range(8)]]
        sent = [weakref.ref(event) for event in pending[0]]
        go_on = asyncio.Event()

        async def batches() -> AsyncIterator[list[StreamEvent]]:
            yield pending.pop()  # handed on, kept nowhere here
            await go_on.wait()

        stream = frames(batches())
        first = await anext(stream)
        assert all(f"w{n} ".encode() in first for n in range(8))
        # The stream now waits for the next batch: its events are gone (no collector needed).
        assert [ref() for ref in sent] == [None] * len(sent)
        go_on.set()
        assert [chunk async for chunk in stream] == [b"data: [DONE]\n\n"]

    asyncio.run(main())
