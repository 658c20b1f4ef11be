"""Streaming events (SSE). Each carries ``type`` (also the SSE ``event:`` line) and ``sequence_number``."""

from __future__ import annotations

from typing import Any, Literal, Self

from pydantic import Field

from ._base import WireModel, is_none, new_model
from ._items import Item
from ._parts import ContentPart, SummaryText
from ._response import ResponseObject

__all__ = [
    "CompactionEvent",
    "ContentPartEvent",
    "CustomToolCallInputDelta",
    "CustomToolCallInputDone",
    "ErrorEvent",
    "ErrorPayload",
    "FunctionCallArgumentsDelta",
    "FunctionCallArgumentsDone",
    "HostedToolEvent",
    "ImagePartialEvent",
    "InterruptEvent",
    "LifecycleEvent",
    "LifecycleType",
    "McpCallArgumentsDelta",
    "McpCallArgumentsDone",
    "McpItemEvent",
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
    "ShellCommandEvent",
    "ShellOutputDelta",
    "ShellOutputDone",
    "StreamEvent",
]


class _Event(WireModel):
    sequence_number: int = 0
    """Position in the stream, from 0 and contiguous; set when the event is emitted."""


class _PieceDelta(_Event):
    """A piece of a call's input as the model writes it (arguments, a custom tool's input, code): one
    a token. Each kind names its own ``type``."""

    type: str
    item_id: str
    output_index: int
    delta: str

    @classmethod
    def of_token(cls, item_id: str, output_index: int, delta: str) -> Self:
        """One token's piece, without validation (see :func:`.new_model`)."""
        fields = {"sequence_number": 0, "type": cls.__pydantic_fields__["type"].default, "item_id": item_id,
                  "output_index": output_index, "delta": delta}  # fmt: skip
        return new_model(cls, fields, {"item_id", "output_index", "delta"}, {})


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


class McpItemEvent(_Event):
    """Progress of an MCP listing or call item (no payload beyond the item's position)."""

    type: Literal[
        "response.mcp_list_tools.in_progress",
        "response.mcp_list_tools.completed",
        "response.mcp_list_tools.failed",
        "response.mcp_call.in_progress",
        "response.mcp_call.completed",
        "response.mcp_call.failed",
    ]
    item_id: str
    output_index: int


class McpCallArgumentsDelta(_PieceDelta):
    type: Literal["response.mcp_call_arguments.delta"] = "response.mcp_call_arguments.delta"


class McpCallArgumentsDone(_Event):
    type: Literal["response.mcp_call_arguments.done"] = "response.mcp_call_arguments.done"
    item_id: str
    output_index: int
    arguments: str


class HostedToolEvent(_Event):
    """Progress of a built-in tool call item (web search, file search, code interpreter, image generation)."""

    type: str
    """``response.<item type>.<phase>``: the names are the hosted kinds' (each says its ``progress`` phase
    between ``in_progress`` and ``completed``; ``ToolRegistry.hosted_events`` lists them)."""
    item_id: str
    output_index: int


class CodeInterpreterCodeDelta(_PieceDelta):
    type: Literal["response.code_interpreter_call_code.delta"] = "response.code_interpreter_call_code.delta"


class CodeInterpreterCodeDone(_Event):
    type: Literal["response.code_interpreter_call_code.done"] = "response.code_interpreter_call_code.done"
    item_id: str
    output_index: int
    code: str


class ShellCommandEvent(_Event):
    """A command of a hosted ``shell_call`` as it is written: ``added``, ``delta`` (a piece), ``done``
    (the whole command). OpenAI's events name the item by ``output_index`` only."""

    type: Literal["response.shell_call_command.added", "response.shell_call_command.delta",
                  "response.shell_call_command.done"]  # fmt: skip
    output_index: int
    command_index: int
    command: str | None = Field(default=None, exclude_if=is_none)
    delta: str | None = Field(default=None, exclude_if=is_none)


class ShellOutputDelta(_Event):
    """What a hosted shell's command printed (``delta``: ``stdout`` and ``stderr``), on its
    ``shell_call_output`` item."""

    type: Literal["response.shell_call_output_content.delta"] = "response.shell_call_output_content.delta"
    item_id: str
    output_index: int
    command_index: int
    delta: dict[str, str]


class ShellOutputDone(_Event):
    """A hosted shell's command ended: its output (``stdout``, ``stderr``, ``outcome``)."""

    type: Literal["response.shell_call_output_content.done"] = "response.shell_call_output_content.done"
    item_id: str
    output_index: int
    command_index: int
    output: list[dict[str, Any]]


class ImagePartialEvent(_Event):
    """A partial image of an ``image_generation_call`` while it is drawn (``partial_images`` asks for them)."""

    type: Literal["response.image_generation_call.partial_image"] = "response.image_generation_call.partial_image"
    item_id: str
    output_index: int
    partial_image_b64: str
    partial_image_index: int
    size: str | None = None
    quality: str | None = None
    background: str | None = None
    output_format: str | None = None


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
