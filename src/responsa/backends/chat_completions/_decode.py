"""Chat Completions stream chunks → model events. Synchronous and IO-free: test it by feeding chunks."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import Any

from responsa.backends._base import (
    Finish,
    FinishReason,
    ModelEvent,
    ReasoningDelta,
    RefusalDelta,
    TextDelta,
    TokenUsage,
    ToolCallDelta,
)
from responsa.backends._stops import partial_suffix

__all__ = ["ChunkDecoder", "ThinkSplitter", "completion_as_chunk"]

_FINISH: dict[str, FinishReason] = {
    "stop": "stop",
    "length": "length",
    "tool_calls": "tool_calls",
    "function_call": "tool_calls",
    "content_filter": "stop",
}
_OPEN, _CLOSE = "<think>", "</think>"


class ThinkSplitter:
    """Splits ``content`` into reasoning (inside ``<think>…</think>``) and answer text, across chunk edges."""

    def __init__(self, thinking: bool = False) -> None:
        """``thinking``: the text begins inside a block (the prompt opened it)."""
        self._thinking = thinking
        self._pending = ""

    @property
    def thinking(self) -> bool:
        """Inside a block now (text fed next is reasoning unless it closes the block)."""
        return self._thinking

    def feed(self, text: str) -> list[ModelEvent]:
        if not self._thinking and not self._pending and "<" not in text:  # the common case, cheaply
            return [TextDelta(text)]
        events: list[ModelEvent] = []
        buffer = self._pending + text
        self._pending = ""
        while buffer:
            tag = _CLOSE if self._thinking else _OPEN
            at = buffer.find(tag)
            if at >= 0:
                self._emit(events, buffer[:at])
                buffer = buffer[at + len(tag) :]
                self._thinking = not self._thinking
                continue
            keep = partial_suffix(buffer, tag)
            self._emit(events, buffer[: len(buffer) - keep])
            self._pending = buffer[len(buffer) - keep :]
            break
        return events

    def flush(self) -> list[ModelEvent]:
        events: list[ModelEvent] = []
        self._emit(events, self._pending)
        self._pending = ""
        return events

    def _emit(self, events: list[ModelEvent], text: str) -> None:
        if text:
            events.append(ReasoningDelta(text) if self._thinking else TextDelta(text))


class ChunkDecoder:
    """Feeds on parsed ``chat.completion.chunk`` objects; :meth:`finish` gives the closing event."""

    def __init__(self, max_tool_calls: int | None = None, prompt: Sequence[dict[str, Any]] = ()) -> None:
        self._think = ThinkSplitter()
        self._reason: FinishReason = "stop"
        self._usage: TokenUsage | None = None
        self._max_tool_calls = max_tool_calls
        self._prompt = prompt
        """The messages sent: counted only when the upstream reports no usage (a pass over every one)."""
        self._deltas = 0

    def feed(self, chunk: dict[str, Any]) -> list[ModelEvent]:
        events: list[ModelEvent] = []
        usage = chunk.get("usage")
        if usage:
            self._usage = _usage(usage)
        for choice in chunk.get("choices") or ():
            if choice.get("index", 0) != 0:
                continue
            delta = choice.get("delta") or {}
            content = delta.get("content")
            if content and len(delta) == 1 and not choice.get("logprobs"):  # text alone: most chunks of a stream
                events += self.text("content", content)
            else:
                self._delta(delta, content, choice, events)
            if choice.get("finish_reason"):
                self._reason = _FINISH.get(choice["finish_reason"], "stop")
        return events

    def text(self, field: str, text: str) -> list[ModelEvent]:
        """The events of a chunk whose delta holds this one field, this text (see ``TextChunks``)."""
        if not text:
            return []
        self._deltas += 1
        return self._think.feed(text) if field == "content" else [ReasoningDelta(text)]

    def _delta(
        self, delta: dict[str, Any], content: str | None, choice: dict[str, Any], events: list[ModelEvent]
    ) -> None:
        """A delta with more than text: reasoning first, then the text (with its log probabilities if the
        chunk has them), a refusal, then tool calls, as they come."""
        events += self.text("reasoning_content", delta.get("reasoning_content") or delta.get("reasoning") or "")
        if content:
            texts = self.text("content", content)
            logprobs = choice.get("logprobs")
            events += _with_logprobs(texts, logprobs) if logprobs else texts
        if refusal := delta.get("refusal"):
            self._deltas += 1
            events.append(RefusalDelta(refusal))
        for call in delta.get("tool_calls") or ():
            index = int(call.get("index", 0))
            if self._max_tool_calls is not None and index >= self._max_tool_calls:
                continue
            function = call.get("function") or {}
            self._deltas += 1
            events.append(
                ToolCallDelta(
                    index=index,
                    arguments=function.get("arguments") or "",
                    name=function.get("name"),
                    call_id=call.get("id"),
                )
            )

    def finish(self) -> list[ModelEvent]:
        """Flush held-back text and close with the upstream's finish reason and usage.

        Servers that send no usage (llama.cpp's, when streaming) get an estimate: four characters
        of prompt per input token, one token per streamed delta.
        """
        usage = self._usage
        if usage is None:
            prompt_chars = sum(len(str(message.get("content") or "")) for message in self._prompt)
            usage = TokenUsage(input_tokens=-(-prompt_chars // 4), output_tokens=self._deltas)
        return [*self._think.flush(), Finish(self._reason, usage)]


def completion_as_chunk(completion: dict[str, Any]) -> dict[str, Any]:
    """A whole ``chat.completion`` as one equivalent stream chunk, so one decoder serves both."""
    choices = []
    for choice in completion.get("choices") or []:
        delta = dict(choice.get("message") or {})
        delta["tool_calls"] = [{**call, "index": i} for i, call in enumerate(delta.get("tool_calls") or [])]
        choices.append({"index": choice.get("index", 0), "delta": delta, "finish_reason": choice.get("finish_reason"),
                        "logprobs": choice.get("logprobs")})  # fmt: skip
    return {"choices": choices, "usage": completion.get("usage")}


def _with_logprobs(events: list[ModelEvent], logprobs: Any) -> list[ModelEvent]:
    """The chunk's token log probabilities on its (first) answer text; reasoning text carries none."""
    entries = logprobs.get("content") if isinstance(logprobs, dict) else None
    if not entries:
        return events
    for index, event in enumerate(events):
        if isinstance(event, TextDelta):
            events[index] = replace(event, logprobs=tuple(entries))
            break
    return events


def _usage(raw: dict[str, Any]) -> TokenUsage:
    prompt_details = raw.get("prompt_tokens_details") or {}
    completion_details = raw.get("completion_tokens_details") or {}
    return TokenUsage(
        input_tokens=int(raw.get("prompt_tokens") or 0),
        output_tokens=int(raw.get("completion_tokens") or 0),
        cached_tokens=int(prompt_details.get("cached_tokens") or 0),
        reasoning_tokens=int(completion_details.get("reasoning_tokens") or 0),
    )
