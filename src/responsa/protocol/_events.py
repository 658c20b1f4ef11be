"""Streaming events (SSE). Each carries ``type`` (also the SSE ``event:`` line) and ``sequence_number``."""

from __future__ import annotations

from typing import Any, Literal, Self

from pydantic import Field

from ._base import WireModel, is_none, new_model
from ._event_base import Event as _Event
from ._event_base import PieceDelta as _PieceDelta
from ._items import Item
from ._parts import ContentPart, SummaryText
from ._response import ResponseObject
from ._tool_events import (
    CodeInterpreterCodeDelta,
    CodeInterpreterCodeDone,
    HostedToolEvent,
    ImagePartialEvent,
    McpCallArgumentsDelta,
    McpCallArgumentsDone,
    McpItemEvent,
    ShellCommandEvent,
    ShellOutputDelta,
    ShellOutputDone,
)

__all__ = [
    "CompactionEvent",
    "ContentPartEvent",
    "CustomToolCallInputDelta",
    "CustomToolCallInputDone",
    "ErrorEvent",
    "ErrorPayload",
    "FunctionCallArgumentsDelta",
    "FunctionCallArgumentsDone",
    "InterruptEvent",
    "LifecycleEvent",
    "LifecycleType",
    "OutputItemEvent",
    "OutputTextDelta",
    "OutputTextDone",
    "ReasoningSummaryPartEvent",
    "ReasoningSummaryTextDelta",
    "ReasoningSummaryTextDone",
    "ReasoningTextDelta",
    "ReasoningTextDone",
    "RefusalDeltaEvent",
    "RefusalDoneEvent",
    "StreamEvent",
]


LifecycleType = Literal[
    "response.created",
    "response.queued",
    "response.in_progress",
    "response.completed",
    "response.incomplete",
    "response.failed",
]


class LifecycleEvent(_Event):
    """A response state transition, with the whole response as it stands."""

    type: LifecycleType
    response: ResponseObject


class OutputItemEvent(_Event):
    """An output item starts (``added``, in_progress) or ends (``done``, completed/incomplete)."""

    type: Literal["response.output_item.added", "response.output_item.done"]
    output_index: int
    item: Item


class ContentPartEvent(_Event):
    """A content part of a message starts or ends."""

    type: Literal["response.content_part.added", "response.content_part.done"]
    item_id: str
    output_index: int
    content_index: int
    part: ContentPart


class OutputTextDelta(_Event):
    type: Literal["response.output_text.delta"] = "response.output_text.delta"
    item_id: str
    output_index: int
    content_index: int
    delta: str
    logprobs: list[dict[str, Any]] = Field(default_factory=list)

    @classmethod
    def of_token(cls, item_id: str, output_index: int, delta: str) -> OutputTextDelta:
        """One token's delta in content part 0, without validation (see :func:`.new_model`)."""
        fields = {"sequence_number": 0, "type": "response.output_text.delta", "item_id": item_id,
                  "output_index": output_index, "content_index": 0, "delta": delta, "logprobs": []}  # fmt: skip
        return new_model(cls, fields, {"item_id", "output_index", "content_index", "delta"}, {})


class OutputTextDone(_Event):
    type: Literal["response.output_text.done"] = "response.output_text.done"
    item_id: str
    output_index: int
    content_index: int
    text: str
    logprobs: list[dict[str, Any]] = Field(default_factory=list)


class RefusalDeltaEvent(_Event):
    """More of a refusal: the model declined, in a message's ``refusal`` part."""

    type: Literal["response.refusal.delta"] = "response.refusal.delta"
    item_id: str
    output_index: int
    content_index: int
    delta: str


class RefusalDoneEvent(_Event):
    type: Literal["response.refusal.done"] = "response.refusal.done"
    item_id: str
    output_index: int
    content_index: int
    refusal: str


class FunctionCallArgumentsDelta(_PieceDelta):
    type: Literal["response.function_call_arguments.delta"] = "response.function_call_arguments.delta"
    call_id: str | None = None
    """The call's ``call_id``, as OpenVINO Model Server sends it (OpenAI's type has no such field; its
    clients read past it)."""

    @classmethod
    def of_call(cls, item_id: str, output_index: int, delta: str, call_id: str | None) -> Self:
        """One token's piece of a call's arguments, without validation (see :func:`.new_model`)."""
        fields = {"sequence_number": 0, "type": "response.function_call_arguments.delta", "item_id": item_id,
                  "output_index": output_index, "delta": delta, "call_id": call_id}  # fmt: skip
        given = {"item_id", "output_index", "delta"} | ({"call_id"} if call_id is not None else set())
        return new_model(cls, fields, given, {})

    @classmethod
    def of_token(cls, item_id: str, output_index: int, delta: str) -> Self:
        return cls.of_call(item_id, output_index, delta, None)


class FunctionCallArgumentsDone(_Event):
    type: Literal["response.function_call_arguments.done"] = "response.function_call_arguments.done"
    item_id: str
    output_index: int
    name: str
    arguments: str


class CompactionEvent(_Event):
    """The server is compacting the context into the ``compaction`` output item (in a create)."""

    type: Literal["response.compaction.compacting"] = "response.compaction.compacting"
    item_id: str
    output_index: int


class CustomToolCallInputDelta(_PieceDelta):
    type: Literal["response.custom_tool_call_input.delta"] = "response.custom_tool_call_input.delta"


class CustomToolCallInputDone(_Event):
    type: Literal["response.custom_tool_call_input.done"] = "response.custom_tool_call_input.done"
    item_id: str
    output_index: int
    input: str


class ReasoningSummaryPartEvent(_Event):
    type: Literal["response.reasoning_summary_part.added", "response.reasoning_summary_part.done"]
    item_id: str
    output_index: int
    summary_index: int
    part: SummaryText


class ReasoningSummaryTextDelta(_Event):
    type: Literal["response.reasoning_summary_text.delta"] = "response.reasoning_summary_text.delta"
    item_id: str
    output_index: int
    summary_index: int
    delta: str

    @classmethod
    def of_token(cls, item_id: str, output_index: int, delta: str) -> ReasoningSummaryTextDelta:
        """One token's delta in summary part 0, without validation (see :func:`.new_model`)."""
        fields = {"sequence_number": 0, "type": "response.reasoning_summary_text.delta", "item_id": item_id,
                  "output_index": output_index, "summary_index": 0, "delta": delta}  # fmt: skip
        return new_model(cls, fields, {"item_id", "output_index", "summary_index", "delta"}, {})


class ReasoningSummaryTextDone(_Event):
    type: Literal["response.reasoning_summary_text.done"] = "response.reasoning_summary_text.done"
    item_id: str
    output_index: int
    summary_index: int
    text: str


class ReasoningTextDelta(_Event):
    """Raw reasoning text (``reasoning_content`` / ``<think>`` of open models)."""

    type: Literal["response.reasoning_text.delta"] = "response.reasoning_text.delta"
    item_id: str
    output_index: int
    content_index: int
    delta: str

    @classmethod
    def of_token(cls, item_id: str, output_index: int, delta: str) -> ReasoningTextDelta:
        """One token's delta in content part 0, without validation (see :func:`.new_model`): reasoning
        models stream most of their tokens as these."""
        fields = {"sequence_number": 0, "type": "response.reasoning_text.delta", "item_id": item_id,
                  "output_index": output_index, "content_index": 0, "delta": delta}  # fmt: skip
        return new_model(cls, fields, {"item_id", "output_index", "content_index", "delta"}, {})


class ReasoningTextDone(_Event):
    type: Literal["response.reasoning_text.done"] = "response.reasoning_text.done"
    item_id: str
    output_index: int
    content_index: int
    text: str


class ErrorPayload(WireModel):
    """What went wrong, as in an HTTP error body."""

    type: str
    code: str | None
    message: str
    param: str | None = None


class ErrorEvent(_Event):
    """A stream-level error not tied to a response state (e.g. the request was invalid).

    The specification nests the error under ``error``; the OpenAI SDK reads ``code``, ``message`` and
    ``param`` at the top: both are sent."""

    type: Literal["error"] = "error"
    code: str | None
    message: str
    param: str | None = None
    error: ErrorPayload


class AnnotationAddedEvent(_Event):
    """An annotation of a message's text, as it becomes known (once the text it cites is written)."""

    type: Literal["response.output_text.annotation.added"] = "response.output_text.annotation.added"
    item_id: str
    output_index: int
    content_index: int
    annotation_index: int
    annotation: dict[str, Any]


class InterruptEvent(_Event):
    """Codex's instant interrupt, on a WebSocket: the interrupt was taken (``response.interrupt.accepted``),
    or an item the model was still writing is dropped (``response.output_item.interrupted``)."""

    type: Literal["response.interrupt.accepted", "response.output_item.interrupted"]
    response_id: str
    item_id: str | None = Field(default=None, exclude_if=is_none)
    output_index: int | None = Field(default=None, exclude_if=is_none)


StreamEvent = (
    LifecycleEvent
    | OutputItemEvent
    | ContentPartEvent
    | OutputTextDelta
    | OutputTextDone
    | RefusalDeltaEvent
    | RefusalDoneEvent
    | FunctionCallArgumentsDelta
    | FunctionCallArgumentsDone
    | CompactionEvent
    | CustomToolCallInputDelta
    | CustomToolCallInputDone
    | ReasoningSummaryPartEvent
    | ReasoningSummaryTextDelta
    | ReasoningSummaryTextDone
    | ReasoningTextDelta
    | ReasoningTextDone
    | McpItemEvent
    | McpCallArgumentsDelta
    | McpCallArgumentsDone
    | HostedToolEvent
    | ImagePartialEvent
    | ShellCommandEvent
    | ShellOutputDelta
    | ShellOutputDone
    | CodeInterpreterCodeDelta
    | CodeInterpreterCodeDone
    | ErrorEvent
    | InterruptEvent
    | AnnotationAddedEvent
)
