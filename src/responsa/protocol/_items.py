"""Items and content parts: the polymorphic units of input and output, discriminated by ``type``.

Unknown and vendor-prefixed (``acme:thing``) types parse into :class:`UnknownItem` /
:class:`UnknownPart`, which keep every field so they round-trip unchanged.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import Discriminator, Field, Tag

from ._base import WirePart

__all__ = [
    "Annotation",
    "Compaction",
    "ContentPart",
    "FunctionCall",
    "FunctionCallOutput",
    "InputFile",
    "InputImage",
    "InputText",
    "Item",
    "ItemReference",
    "ItemStatus",
    "McpApprovalRequest",
    "McpApprovalResponse",
    "McpCall",
    "McpListTools",
    "McpToolInfo",
    "Message",
    "OutputText",
    "Reasoning",
    "ReasoningText",
    "Refusal",
    "SummaryText",
    "UnknownItem",
    "UnknownPart",
    "item_text",
]

ItemStatus = Literal["in_progress", "completed", "incomplete"]
Role = Literal["user", "assistant", "system", "developer"]


class InputText(WirePart):
    """Text the client sends."""

    type: Literal["input_text"] = "input_text"
    text: str


class InputImage(WirePart):
    """An image by URL (``https:`` or ``data:``) or by uploaded file id."""

    type: Literal["input_image"] = "input_image"
    image_url: str | None = None
    file_id: str | None = None
    detail: Literal["low", "high", "auto", "original"] | None = None


class InputFile(WirePart):
    """A file inline (``file_data``), by URL or by uploaded file id."""

    type: Literal["input_file"] = "input_file"
    file_id: str | None = None
    file_data: str | None = None
    file_url: str | None = None
    filename: str | None = None


class Annotation(WirePart):
    """A citation or file reference attached to output text (kept as sent)."""

    type: str


class OutputText(WirePart):
    """Text the model produced."""

    type: Literal["output_text"] = "output_text"
    text: str
    annotations: list[Annotation] = Field(default_factory=list)
    logprobs: list[dict[str, Any]] | None = None


class Refusal(WirePart):
    """The model declined to answer."""

    type: Literal["refusal"] = "refusal"
    refusal: str


class SummaryText(WirePart):
    """One part of a reasoning summary."""

    type: Literal["summary_text"] = "summary_text"
    text: str


class ReasoningText(WirePart):
    """Raw reasoning text, where a model exposes it."""

    type: Literal["reasoning_text"] = "reasoning_text"
    text: str


class UnknownPart(WirePart):
    """A content part of a type we do not know; kept verbatim."""

    type: str


_PART_TAGS = frozenset({"input_text", "input_image", "input_file", "output_text", "refusal", "reasoning_text"})


def _part_tag(value: Any) -> str:
    kind = value.get("type") if isinstance(value, dict) else getattr(value, "type", None)
    return kind if kind in _PART_TAGS else "unknown"


ContentPart = Annotated[
    Annotated[InputText, Tag("input_text")]
    | Annotated[InputImage, Tag("input_image")]
    | Annotated[InputFile, Tag("input_file")]
    | Annotated[OutputText, Tag("output_text")]
    | Annotated[Refusal, Tag("refusal")]
    | Annotated[ReasoningText, Tag("reasoning_text")]
    | Annotated[UnknownPart, Tag("unknown")],
    Discriminator(_part_tag),
]


class Message(WirePart):
    """A turn by a role; ``content`` may be a plain string on input (normalised to parts)."""

    type: Literal["message"] = "message"
    id: str | None = None
    role: Role
    content: str | list[ContentPart]
    status: ItemStatus | None = None
    phase: Literal["commentary", "final_answer"] | None = None
    """On assistant messages: intermediate commentary (before tool calls) or the final answer.
    Clients resend it with history; responsa keeps it as sent and sets it on the model's output."""


class FunctionCall(WirePart):
    """The model asks the client to run a function tool."""

    type: Literal["function_call"] = "function_call"
    id: str | None = None
    call_id: str
    name: str
    arguments: str
    status: ItemStatus | None = None


class FunctionCallOutput(WirePart):
    """The client's result for a ``function_call``, matched by ``call_id``."""

    type: Literal["function_call_output"] = "function_call_output"
    id: str | None = None
    call_id: str
    output: str | list[ContentPart]
    status: ItemStatus | None = None


class Reasoning(WirePart):
    """The model's reasoning: a summary, optional raw content, optional opaque blob."""

    type: Literal["reasoning"] = "reasoning"
    id: str | None = None
    summary: list[SummaryText] = Field(default_factory=list)
    content: list[ReasoningText] | None = None
    encrypted_content: str | None = None
    status: ItemStatus | None = None


class ItemReference(WirePart):
    """Points at an item stored earlier, to be used in its place."""

    type: Literal["item_reference"] = "item_reference"
    id: str


class McpToolInfo(WirePart):
    """A tool an MCP server offers, as listed in ``mcp_list_tools``."""

    name: str
    description: str | None = None
    input_schema: dict[str, Any] = Field(default_factory=lambda: {"type": "object"})
    annotations: dict[str, Any] | None = None


class McpListTools(WirePart):
    """The tools an MCP server offered; reused from earlier turns instead of asking again."""

    type: Literal["mcp_list_tools"] = "mcp_list_tools"
    id: str | None = None
    server_label: str
    tools: list[McpToolInfo] = Field(default_factory=list)
    error: str | None = None


class McpCall(WirePart):
    """A call the server made to an MCP tool, with its output or error."""

    type: Literal["mcp_call"] = "mcp_call"
    id: str | None = None
    server_label: str
    name: str
    arguments: str
    output: str | None = None
    error: dict[str, Any] | None = None
    """``{"type": "mcp_protocol_error" | "mcp_tool_execution_error" | "http_error", ...}``."""
    status: Literal["in_progress", "completed", "incomplete", "calling", "failed"] | None = None
    approval_request_id: str | None = None


class McpApprovalRequest(WirePart):
    """The model wants to call an MCP tool that needs the client's approval first."""

    type: Literal["mcp_approval_request"] = "mcp_approval_request"
    id: str | None = None
    server_label: str
    name: str
    arguments: str


class McpApprovalResponse(WirePart):
    """The client's answer to an ``mcp_approval_request``."""

    type: Literal["mcp_approval_response"] = "mcp_approval_response"
    id: str | None = None
    approval_request_id: str
    approve: bool
    reason: str | None = None


class Compaction(WirePart):
    """What an earlier part of a conversation was compacted into: opaque to the client, which sends it
    back as input; the server expands it into the summary it stands for."""

    type: Literal["compaction"] = "compaction"
    id: str | None = None
    encrypted_content: str
    created_by: str | None = None


class UnknownItem(WirePart):
    """An item of a type we do not know (e.g. ``vendor:thing``); kept verbatim and ignored by models."""

    type: str
    id: str | None = None


_ITEM_TAGS = frozenset(
    {
        "message",
        "function_call",
        "function_call_output",
        "reasoning",
        "item_reference",
        "mcp_list_tools",
        "mcp_call",
        "mcp_approval_request",
        "mcp_approval_response",
        "compaction",
    }
)


def _item_tag(value: Any) -> str:
    if isinstance(value, dict):
        kind = value.get("type")
        if kind is None and "role" in value:
            return "message"
    else:
        kind = getattr(value, "type", None)
    return kind if kind in _ITEM_TAGS else "unknown"


Item = Annotated[
    Annotated[Message, Tag("message")]
    | Annotated[FunctionCall, Tag("function_call")]
    | Annotated[FunctionCallOutput, Tag("function_call_output")]
    | Annotated[Reasoning, Tag("reasoning")]
    | Annotated[ItemReference, Tag("item_reference")]
    | Annotated[McpListTools, Tag("mcp_list_tools")]
    | Annotated[McpCall, Tag("mcp_call")]
    | Annotated[McpApprovalRequest, Tag("mcp_approval_request")]
    | Annotated[McpApprovalResponse, Tag("mcp_approval_response")]
    | Annotated[Compaction, Tag("compaction")]
    | Annotated[UnknownItem, Tag("unknown")],
    Discriminator(_item_tag),
]


def item_text(item: Message | FunctionCallOutput) -> str:
    """The plain text carried by a message or a tool output, parts joined by newlines."""
    content = item.content if isinstance(item, Message) else item.output
    if isinstance(content, str):
        return content
    texts: list[str] = []
    for part in content:
        if isinstance(part, InputText | OutputText):
            texts.append(part.text)
        elif isinstance(part, Refusal):
            texts.append(part.refusal)
    return "\n".join(texts)
