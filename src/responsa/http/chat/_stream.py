"""Responses stream events as ``chat.completion.chunk`` objects: a synchronous, IO-free translator
(fed event by event, as the engine produces them) and the SSE framing around it."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import orjson

from responsa.protocol import (
    TERMINAL_EVENT_TYPES,
    FunctionCall,
    FunctionCallArgumentsDelta,
    LifecycleEvent,
    OutputItemEvent,
    OutputTextDelta,
    ReasoningSummaryTextDelta,
    ReasoningTextDelta,
    RefusalDeltaEvent,
    ResponseObject,
    StreamEvent,
)

from .._sse import framed_stream
from ._translate import completion_id, completion_usage, finish_reason

__all__ = ["ChatChunker", "chat_sse"]


class ChatChunker:
    """Turns one response's events into the chunks a Chat Completions client reads."""

    def __init__(self, include_usage: bool, logprobs: bool) -> None:
        self._include_usage = include_usage
        self._logprobs = logprobs
        self._id = ""
        self._model = ""
        self._created = 0
        self._calls: dict[str, int] = {}
        """Function call item id → its index in ``tool_calls``."""
        self.error: dict[str, Any] | None = None
        """The failure that ended the stream, if it failed."""

    def feed(self, event: StreamEvent) -> list[dict[str, Any]]:
        if isinstance(event, LifecycleEvent):
            return self._lifecycle(event.type, event.response)
        if isinstance(event, OutputTextDelta):
            choice: dict[str, Any] = {"content": event.delta}
            logprobs = {"content": event.logprobs, "refusal": None} if self._logprobs else None
            return [self._chunk(choice, logprobs=logprobs)]
        if isinstance(event, RefusalDeltaEvent):
            return [self._chunk({"refusal": event.delta})]
        if isinstance(event, ReasoningTextDelta | ReasoningSummaryTextDelta):
            return [self._chunk({"reasoning_content": event.delta})]
        if isinstance(event, OutputItemEvent) and event.type == "response.output_item.added":
            item = event.item
            if isinstance(item, FunctionCall) and item.id is not None:
                index = self._calls[item.id] = len(self._calls)
                call = {"index": index, "id": item.call_id, "type": "function",
                        "function": {"name": item.name, "arguments": item.arguments}}  # fmt: skip
                return [self._chunk({"tool_calls": [call]})]
        if isinstance(event, FunctionCallArgumentsDelta) and event.item_id in self._calls:
            call = {"index": self._calls[event.item_id], "function": {"arguments": event.delta}}
            return [self._chunk({"tool_calls": [call]})]
        return []

    def _lifecycle(self, kind: str, response: ResponseObject) -> list[dict[str, Any]]:
        if kind == "response.created":
            self._id = completion_id(response.id)
            self._model = response.model
            self._created = response.created_at
            return [self._chunk({"role": "assistant", "content": ""})]
        if kind not in TERMINAL_EVENT_TYPES:
            return []
        if kind == "response.failed":
            error = response.error
            self.error = {"message": error.message if error else "The response failed.", "type": "server_error",
                          "param": None, "code": error.code if error else None}  # fmt: skip
            return []
        chunks = [self._chunk({}, finish=finish_reason(response))]
        if self._include_usage:
            chunks.append({**self._envelope(), "choices": [], "usage": completion_usage(response)})
        return chunks

    def _envelope(self) -> dict[str, Any]:
        return {"id": self._id, "object": "chat.completion.chunk", "created": self._created, "model": self._model,
                "system_fingerprint": None}  # fmt: skip

    def _chunk(
        self, delta: dict[str, Any], finish: str | None = None, logprobs: dict[str, Any] | None = None
    ) -> dict[str, Any]:
        chunk = {**self._envelope(), "choices": [{"index": 0, "delta": delta, "logprobs": logprobs,
                                                   "finish_reason": finish}]}  # fmt: skip
        if self._include_usage:
            chunk["usage"] = None  # present on every chunk, as OpenAI sends it when usage is asked for
        return chunk


def chat_sse(batches: AsyncIterator[list[StreamEvent]], chunker: ChatChunker) -> AsyncIterator[bytes]:
    """``data:`` frames of chunks (no ``event:`` lines, as OpenAI streams chat), an ``error`` frame if
    the response failed after the stream began, then ``[DONE]``: the Responses stream's loop
    (:func:`framed_stream`) with chat's framing."""

    def frames(events: list[StreamEvent]) -> bytes:
        return b"".join(
            [b"data: " + orjson.dumps(chunk) + b"\n\n" for event in events for chunk in chunker.feed(event)]
        )

    def failure() -> bytes:
        return b"" if chunker.error is None else b"data: " + orjson.dumps({"error": chunker.error}) + b"\n\n"

    return framed_stream(batches, frames, failure)
