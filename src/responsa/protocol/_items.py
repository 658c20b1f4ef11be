"""Items and content parts: the polymorphic units of input and output, discriminated by ``type``.

Unknown and vendor-prefixed (``acme:thing``) types parse into :class:`UnknownItem` /
:class:`UnknownPart`, which keep every field so they round-trip unchanged.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import Discriminator, Field, Tag, model_validator

from ._base import WirePart, member_tags
from ._mcp_items import McpApprovalRequest, McpApprovalResponse, McpCall, McpListTools
from ._parts import ContentPart, InputText, OutputText, ReasoningText, Refusal, SummaryText
from ._tool_calls import (
    ApplyPatchCall,
    ApplyPatchCallOutput,
    CodeInterpreterCall,
    CustomToolCall,
    CustomToolCallOutput,
    FileSearchCall,
    ImageGenerationCall,
    LocalShellCall,
    LocalShellCallOutput,
    ShellCall,
    ShellCallOutput,
    ToolSearchCall,
    ToolSearchOutput,
    WebSearchCall,
)
from ._tools import Tool

__all__ = [
    "ITEM_TYPES",
    "ROOT_AGENT",
    "AdditionalTools",
    "Compaction",
    "FunctionCall",
    "FunctionCallOutput",
    "Item",
    "ItemReference",
    "ItemStatus",
    "Message",
    "Reasoning",
    "UnknownItem",
    "item_text",
    "made_by_another_agent",
]

ItemStatus = Literal["in_progress", "completed", "incomplete"]
Role = Literal["user", "assistant", "system", "developer"]


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

    @model_validator(mode="before")
    @classmethod
    def _chat_parts(cls, value: Any) -> Any:
        if isinstance(value, dict) and isinstance(value.get("content"), list):
            output = value.get("role") == "assistant"
            return {**value, "content": [chat_part(part, output) for part in value["content"]]}
        return value


def chat_part(part: Any, output: bool = False) -> Any:
    """A Chat Completions content part (``text``, ``image_url``, ``file``: what mlxcel's and
    OpenVINO's clients send) as the Responses part it means; others as they are."""
    if not isinstance(part, dict):
        return part
    kind = part.get("type")
    if kind == "text":
        return {**part, "type": "output_text" if output else "input_text"}
    if kind == "image_url":
        image = part.get("image_url")
        fields = image if isinstance(image, dict) else {"url": image}
        converted = {"type": "input_image", "image_url": fields.get("url")}
        return {**converted, "detail": fields["detail"]} if fields.get("detail") else converted
    if kind == "file" and isinstance(part.get("file"), dict):
        return {"type": "input_file", **part["file"]}
    return part


class FunctionCall(WirePart):
    """The model asks the client to run a function tool."""

    type: Literal["function_call"] = "function_call"
    id: str | None = None
    call_id: str
    name: str
    arguments: str
    namespace: str | None = None
    """The ``namespace`` tool the function belongs to, if any."""
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


class Compaction(WirePart):
    """What an earlier part of a conversation was compacted into: opaque to the client, which sends it
    back as input; the server expands it into the summary it stands for."""

    type: Literal["compaction"] = "compaction"
    id: str | None = None
    encrypted_content: str
    created_by: str | None = None


class CompactionTrigger(WirePart):
    """Asks for the context before it to be compacted (the last input item; Codex's remote compaction
    v2): the response's output is then one ``compaction`` item, and no model answer."""

    type: Literal["compaction_trigger"] = "compaction_trigger"
    id: str | None = None


class ConfigurationUpdate(WirePart):
    """Changes the reasoning effort and/or the output format of this response and the later ones,
    until a later update replaces each (openai 3.57's ``configuration_update`` item)."""

    type: Literal["configuration_update"] = "configuration_update"
    id: str | None = None
    reasoning: dict[str, Any] | None = None
    """``{"effort": ...}``: only the effort can be changed."""
    text: dict[str, Any] | None = None
    """``{"format": ...}``: a ``text`` or ``json_schema`` format."""


class AdditionalTools(WirePart):
    """Tools made callable from this point of the input on (openai 3.57's ``additional_tools``: Codex's
    Responses Lite sends its tools here, in a ``namespace``, instead of in ``tools``)."""

    type: Literal["additional_tools"] = "additional_tools"
    id: str | None = None
    role: Literal["developer"] = "developer"
    tools: list[Tool] = Field(default_factory=list)


class UnknownItem(WirePart):
    """An item of a type we do not know (e.g. ``vendor:thing``); kept verbatim and ignored by models."""

    type: str
    id: str | None = None


def _item_tag(value: Any) -> str:
    if isinstance(value, dict):
        kind = value.get("type")
        if kind is None and "role" in value:
            return "message"
    else:
        kind = getattr(value, "type", None)
    return kind if isinstance(kind, str) and kind in ITEM_TYPES else "unknown"  # a non-string type: a 400


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
    | Annotated[CompactionTrigger, Tag("compaction_trigger")]
    | Annotated[ConfigurationUpdate, Tag("configuration_update")]
    | Annotated[AdditionalTools, Tag("additional_tools")]
    | Annotated[CustomToolCall, Tag("custom_tool_call")]
    | Annotated[CustomToolCallOutput, Tag("custom_tool_call_output")]
    | Annotated[ShellCall, Tag("shell_call")]
    | Annotated[ShellCallOutput, Tag("shell_call_output")]
    | Annotated[LocalShellCall, Tag("local_shell_call")]
    | Annotated[LocalShellCallOutput, Tag("local_shell_call_output")]
    | Annotated[ApplyPatchCall, Tag("apply_patch_call")]
    | Annotated[ApplyPatchCallOutput, Tag("apply_patch_call_output")]
    | Annotated[ToolSearchCall, Tag("tool_search_call")]
    | Annotated[ToolSearchOutput, Tag("tool_search_output")]
    | Annotated[FileSearchCall, Tag("file_search_call")]
    | Annotated[WebSearchCall, Tag("web_search_call")]
    | Annotated[ImageGenerationCall, Tag("image_generation_call")]
    | Annotated[CodeInterpreterCall, Tag("code_interpreter_call")]
    | Annotated[UnknownItem, Tag("unknown")],
    Discriminator(_item_tag),
]

ITEM_TYPES = member_tags(Item) - {"unknown"}
"""The item types the union knows; any other is an ``UnknownItem`` (read at validation, once ``Item`` is made):
a 400 in a request's input unless a tool kind owns it or it is vendor-prefixed (``acme:thing``)."""


ROOT_AGENT = "/root"
"""In a hosted multi-agent response, the agent the request itself runs (subagents: ``/root/<name>``)."""


def made_by_another_agent(item: Any) -> bool:
    """Whether ``item`` is marked (``agent.agent_name``) as made by a subagent of a multi-agent response:
    the root's model does not read it as its own (most items have no mark: one look at their extras)."""
    extra = item.__pydantic_extra__
    agent = extra.get("agent") if extra else None
    return isinstance(agent, dict) and agent.get("agent_name", ROOT_AGENT) != ROOT_AGENT


def item_text(item: Message | FunctionCallOutput | CustomToolCallOutput) -> str:
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
