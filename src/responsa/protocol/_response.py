"""The response object, as returned by create/retrieve and carried by lifecycle events."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field, computed_field, field_validator

from ._base import WireModel, is_none
from ._items import Item, Message
from ._parts import OutputText
from ._request import TextConfig
from ._tools import Tool, ToolChoice

__all__ = [
    "DeletedObject",
    "IncompleteDetails",
    "InputTokensDetails",
    "OutputTokensDetails",
    "ResponseError",
    "ResponseObject",
    "ResponseReasoning",
    "ResponseStatus",
    "Usage",
]

ResponseStatus = Literal["queued", "in_progress", "completed", "incomplete", "failed", "cancelled"]
TERMINAL_STATUSES: frozenset[str] = frozenset({"completed", "incomplete", "failed", "cancelled"})
TERMINAL_EVENT_TYPES: frozenset[str] = frozenset({"response.completed", "response.incomplete", "response.failed"})
"""The stream events that tell a client a response has ended (a cancelled response has none)."""


class InputTokensDetails(WireModel):
    cached_tokens: int = 0
    """Input tokens served from the prompt cache."""
    cache_write_tokens: int = 0
    """Input tokens written to a prompt cache the client can address (openai 3.57 requires the field;
    responsa has no such cache, so it is 0)."""


class OutputTokensDetails(WireModel):
    reasoning_tokens: int = 0
    """Output tokens spent on reasoning (not visible as text)."""


class Usage(WireModel):
    """Token accounting; ``total_tokens`` is input plus output."""

    input_tokens: int
    input_tokens_details: InputTokensDetails = Field(default_factory=InputTokensDetails)
    output_tokens: int
    output_tokens_details: OutputTokensDetails = Field(default_factory=OutputTokensDetails)
    total_tokens: int


class ResponseError(WireModel):
    """Why a response failed."""

    code: str
    message: str


class IncompleteDetails(WireModel):
    """Why a response stopped before finishing."""

    reason: Literal["max_output_tokens", "content_filter"] | str


class ResponseReasoning(WireModel):
    """The reasoning settings a response ran with; both keys always present, as the specification requires."""

    effort: str | None = None
    summary: str | None = None
    context: str | None = Field(default=None, exclude_if=is_none)
    """``current_turn`` or ``all_turns`` where the request asked for one (the reasoning context feature)."""


class ResponseObject(WireModel):
    """A response, echoing the parameters it was created with, as the OpenAI API does.

    The fields a request feature fills are declared here too, left out of the JSON while unset (a
    response that did not ask shows none of them, as OpenAI's)."""

    id: str
    object: Literal["response"] = "response"
    created_at: int
    status: ResponseStatus
    background: bool = False
    completed_at: int | None = None
    conversation: dict[str, str] | None = None
    error: ResponseError | None = None
    incomplete_details: IncompleteDetails | None = None
    instructions: str | None = None
    max_output_tokens: int | None = None
    max_tool_calls: int | None = None
    metadata: dict[str, str] = Field(default_factory=dict)
    model: str
    output: list[Item] = Field(default_factory=list)
    parallel_tool_calls: bool = True
    previous_response_id: str | None = None
    prompt_cache_key: str | None = None
    prompt_cache_retention: str | None = None
    reasoning: ResponseReasoning = Field(default_factory=ResponseReasoning)
    safety_identifier: str | None = None
    service_tier: str | None = None
    store: bool = True
    temperature: float | None = None
    presence_penalty: float = 0.0
    frequency_penalty: float = 0.0
    text: TextConfig = Field(default_factory=TextConfig)
    tool_choice: ToolChoice = "auto"
    tools: list[Tool] = Field(default_factory=list)
    top_logprobs: int | None = None
    top_p: float | None = None
    truncation: str = "disabled"
    usage: Usage | None = None
    user: str | None = None
    access_programs: dict[str, str] | None = Field(default=None, exclude_if=is_none)
    """The access programs in effect (filled on responses that asked for one)."""
    image: dict[str, str] | None = Field(default=None, exclude_if=is_none)
    """The image options in effect (filled on responses that asked about image context)."""
    ignored_tools: list[dict[str, str]] | None = Field(default=None, exclude_if=is_none)
    """An extension: the hosted tools this server could not offer the model, and why (docs/api.md)."""
    input_transformations: list[dict[str, str]] | None = Field(default=None, exclude_if=is_none)
    """What was withheld from the model's input (encrypted reasoning of another server), as OpenAI fills it."""
    moderation: dict[str, Any] | None = Field(default=None, exclude_if=is_none)
    """The moderation feature's results on input and output."""
    prompt: dict[str, Any] | None = Field(default=None, exclude_if=is_none)
    """The reusable prompt as resolved (id, the version used, variables)."""
    prompt_cache_diagnostics: dict[str, Any] | None = Field(default=None, exclude_if=is_none)
    """Why the prompt cache was or was not reused, as the prompt cache feature found."""
    prompt_cache_options: dict[str, Any] | None = Field(default=None, exclude_if=is_none)
    """The prompt cache options as applied."""
    shown_includes: tuple[str, ...] = Field(default=(), exclude=True)
    """The create's ``include``: which optional data its reply showed. Some is stored whether asked
    or not (``file_search_call.results``), so a retrieve can show it; this keeps a retrieve without
    ``include`` showing what the create did. Stored with the response, never sent (``exclude``; a plain
    field, since a private attribute would cost a hook on every copy of every response)."""

    @field_validator("reasoning", "text", mode="before")
    @classmethod
    def _null_is_default(cls, value: Any) -> Any:
        """Responses stored before these were always objects have ``null`` here."""
        return {} if value is None else value

    @computed_field  # type: ignore[prop-decorator]
    @property
    def output_text(self) -> str:
        """All ``output_text`` of the assistant's messages, concatenated (the SDK's ``output_text``)."""
        return "".join(
            part.text
            for item in self.output
            if isinstance(item, Message)
            for part in item.content
            if isinstance(part, OutputText)
        )


class DeletedObject(WireModel):
    """Reply to a DELETE."""

    id: str
    object: str
    deleted: bool = True
