"""Model events → output items and stream events. Synchronous and IO-free: test it by feeding lists.

The builder owns the response's state machine (in_progress → completed / incomplete / failed /
cancelled) and each output item's (in_progress → completed / incomplete), and numbers every event
it emits from 0 without gaps.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Literal

from responsa.backends import (
    Finish,
    ModelEvent,
    ReasoningDelta,
    ReasoningSummaryDelta,
    TextDelta,
    TokenUsage,
    ToolCallDelta,
)
from responsa.protocol import (
    ContentPartEvent,
    FunctionCall,
    FunctionCallArgumentsDelta,
    FunctionCallArgumentsDone,
    IncompleteDetails,
    InputTokensDetails,
    LifecycleEvent,
    Message,
    OutputItemEvent,
    OutputText,
    OutputTextDelta,
    OutputTextDone,
    OutputTokensDetails,
    Reasoning,
    ReasoningSummaryPartEvent,
    ReasoningSummaryTextDelta,
    ReasoningSummaryTextDone,
    ReasoningText,
    ReasoningTextDelta,
    ReasoningTextDone,
    ResponsaError,
    ResponseError,
    ResponseObject,
    StreamEvent,
    SummaryText,
    Usage,
    new_id,
)

__all__ = ["OutputBuilder"]

ItemEnd = Literal["completed", "incomplete"]


@dataclass
class _OpenItem:
    """The output item currently receiving deltas."""

    output_index: int
    item: Message | FunctionCall | Reasoning
    chunks: list[str] = field(default_factory=list)
    """Message text, call arguments or raw reasoning, as it arrives."""
    summary_chunks: list[str] = field(default_factory=list)
    tool_index: int | None = None


class OutputBuilder:
    """Builds ``response.output`` from model events and yields the matching stream events."""

    def __init__(self, response: ResponseObject) -> None:
        self.response = response
        self._sequence = 0
        self._open: _OpenItem | None = None
        self.finished = False

    def _emit(self, event: StreamEvent) -> StreamEvent:
        event.sequence_number = self._sequence
        self._sequence += 1
        return event

    def _lifecycle(self, kind: str) -> StreamEvent:
        snapshot = self.response.model_copy(deep=True)
        return self._emit(LifecycleEvent.model_validate({"type": kind, "response": snapshot}))

    def start(self) -> list[StreamEvent]:
        """``response.created`` then ``response.in_progress``."""
        return [self._lifecycle("response.created"), self._lifecycle("response.in_progress")]

    def feed(self, event: ModelEvent) -> list[StreamEvent]:
        """The stream events one model event causes; a :class:`Finish` ends the response."""
        if isinstance(event, TextDelta):
            return self._text(event.text)
        if isinstance(event, ToolCallDelta):
            return self._tool_call(event)
        if isinstance(event, ReasoningDelta):
            return self._reasoning(event.text, summary=False)
        if isinstance(event, ReasoningSummaryDelta):
            return self._reasoning(event.text, summary=True)
        return self.finish(event)

    def _switch_to(self, item: Message | FunctionCall | Reasoning, tool_index: int | None = None) -> list[StreamEvent]:
        events = self._close_open("completed")
        index = len(self.response.output)
        self.response.output.append(item)
        self._open = _OpenItem(index, item, tool_index=tool_index)
        events.append(
            self._emit(
                OutputItemEvent(type="response.output_item.added", output_index=index, item=item.model_copy(deep=True))
            )
        )
        return events

    def _text(self, text: str) -> list[StreamEvent]:
        events: list[StreamEvent] = []
        if self._open is None or not isinstance(self._open.item, Message):
            message = Message(id=new_id("msg"), role="assistant", content=[], status="in_progress")
            events += self._switch_to(message)
            assert self._open is not None
            events.append(
                self._emit(
                    ContentPartEvent(
                        type="response.content_part.added",
                        item_id=message.id or "",
                        output_index=self._open.output_index,
                        content_index=0,
                        part=OutputText(text="", logprobs=[]),
                    )
                )
            )
        assert self._open is not None
        self._open.chunks.append(text)
        events.append(
            self._emit(
                OutputTextDelta(
                    item_id=self._open.item.id or "", output_index=self._open.output_index, content_index=0, delta=text
                )
            )
        )
        return events

    def _tool_call(self, delta: ToolCallDelta) -> list[StreamEvent]:
        events: list[StreamEvent] = []
        if self._open is None or self._open.tool_index != delta.index:
            call = FunctionCall(
                id=new_id("fc"),
                call_id=delta.call_id or new_id("call"),
                name=delta.name or "",
                arguments="",
                status="in_progress",
            )
            events += self._switch_to(call, tool_index=delta.index)
        assert self._open is not None
        if delta.arguments:
            self._open.chunks.append(delta.arguments)
            events.append(
                self._emit(
                    FunctionCallArgumentsDelta(
                        item_id=self._open.item.id or "", output_index=self._open.output_index, delta=delta.arguments
                    )
                )
            )
        return events

    def _reasoning(self, text: str, summary: bool) -> list[StreamEvent]:
        events: list[StreamEvent] = []
        if not text:
            return events
        if self._open is None or not isinstance(self._open.item, Reasoning):
            events += self._switch_to(Reasoning(id=new_id("rs"), summary=[], status="in_progress"))
        assert self._open is not None
        open_item = self._open
        where = {"item_id": open_item.item.id or "", "output_index": open_item.output_index}
        chunks = open_item.summary_chunks if summary else open_item.chunks
        if not chunks:
            added: StreamEvent = (
                ReasoningSummaryPartEvent(
                    type="response.reasoning_summary_part.added", summary_index=0, part=SummaryText(text=""), **where
                )
                if summary
                else ContentPartEvent(
                    type="response.content_part.added", content_index=0, part=ReasoningText(text=""), **where
                )
            )
            events.append(self._emit(added))
        chunks.append(text)
        delta: StreamEvent = (
            ReasoningSummaryTextDelta(summary_index=0, delta=text, **where)
            if summary
            else ReasoningTextDelta(content_index=0, delta=text, **where)
        )
        events.append(self._emit(delta))
        return events

    def _close_reasoning(self, item: Reasoning, open_item: _OpenItem) -> list[StreamEvent]:
        events: list[StreamEvent] = []
        where = {"item_id": item.id or "", "output_index": open_item.output_index}
        if open_item.chunks:
            part = ReasoningText(text="".join(open_item.chunks))
            item.content = [part]
            events.append(self._emit(ReasoningTextDone(content_index=0, text=part.text, **where)))
            events.append(
                self._emit(
                    ContentPartEvent(
                        type="response.content_part.done", content_index=0, part=part.model_copy(), **where
                    )
                )
            )
        if open_item.summary_chunks:
            summary = SummaryText(text="".join(open_item.summary_chunks))
            item.summary = [summary]
            events.append(self._emit(ReasoningSummaryTextDone(summary_index=0, text=summary.text, **where)))
            events.append(
                self._emit(
                    ReasoningSummaryPartEvent(
                        type="response.reasoning_summary_part.done", summary_index=0, part=summary.model_copy(), **where
                    )
                )
            )
        return events

    def _close_open(self, status: ItemEnd) -> list[StreamEvent]:
        open_item, self._open = self._open, None
        if open_item is None:
            return []
        item, index, text = open_item.item, open_item.output_index, "".join(open_item.chunks)
        item_id = item.id or ""
        events: list[StreamEvent] = []
        if isinstance(item, Message):
            part = OutputText(text=text, logprobs=[])
            item.content = [part]
            events.append(self._emit(OutputTextDone(item_id=item_id, output_index=index, content_index=0, text=text)))
            events.append(
                self._emit(
                    ContentPartEvent(
                        type="response.content_part.done",
                        item_id=item_id,
                        output_index=index,
                        content_index=0,
                        part=part.model_copy(),
                    )
                )
            )
        elif isinstance(item, FunctionCall):
            item.arguments = text
            events.append(
                self._emit(
                    FunctionCallArgumentsDone(item_id=item_id, output_index=index, name=item.name, arguments=text)
                )
            )
        else:
            events += self._close_reasoning(item, open_item)
        item.status = status
        events.append(
            self._emit(
                OutputItemEvent(type="response.output_item.done", output_index=index, item=item.model_copy(deep=True))
            )
        )
        return events

    def finish(self, finish: Finish) -> list[StreamEvent]:
        """Close the open item and end the response: ``completed``, or ``incomplete`` at the token limit."""
        truncated = finish.reason == "length"
        events = self._close_open("incomplete" if truncated else "completed")
        self.response.usage = _usage(finish.usage)
        if truncated:
            self.response.status = "incomplete"
            self.response.incomplete_details = IncompleteDetails(reason="max_output_tokens")
        else:
            self.response.status = "completed"
        self.response.completed_at = int(time.time())
        self.finished = True
        events.append(self._lifecycle(f"response.{self.response.status}"))
        return events

    def fail(self, error: ResponsaError) -> list[StreamEvent]:
        """End the response as ``failed`` with ``error``; open items end ``incomplete``."""
        events = self._close_open("incomplete")
        self.response.status = "failed"
        self.response.error = ResponseError(code=error.code or "server_error", message=error.message)
        self.finished = True
        events.append(self._lifecycle("response.failed"))
        return events

    def cancel(self) -> list[StreamEvent]:
        """Stop where we are: open items end ``incomplete`` and the response is ``cancelled``."""
        events = self._close_open("incomplete")
        self.response.status = "cancelled"
        self.finished = True
        return events


def _usage(tokens: TokenUsage) -> Usage:
    return Usage(
        input_tokens=tokens.input_tokens,
        input_tokens_details=InputTokensDetails(cached_tokens=tokens.cached_tokens),
        output_tokens=tokens.output_tokens,
        output_tokens_details=OutputTokensDetails(reasoning_tokens=tokens.reasoning_tokens),
        total_tokens=tokens.input_tokens + tokens.output_tokens,
    )
