"""The body of ``POST /v1/responses``."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import ConfigDict, Field, StrictBool, field_validator, model_validator

from ._base import WireModel, WirePart
from ._errors import InvalidRequest
from ._items import Item
from ._metadata import Metadata
from ._tools import Tool, ToolChoice

__all__ = [
    "AccessPrograms",
    "BackgroundOptions",
    "ConversationRef",
    "CreateResponseRequest",
    "ImageOptions",
    "JsonObjectFormat",
    "JsonSchemaFormat",
    "ModerationOptions",
    "ModerationRequest",
    "PromptCacheOptions",
    "ReasoningConfig",
    "TextConfig",
    "TextFormat",
    "TextPlainFormat",
]


class TextPlainFormat(WirePart):
    """Free text (the default)."""

    type: Literal["text"] = "text"


class JsonObjectFormat(WirePart):
    """Any JSON object."""

    type: Literal["json_object"]


class JsonSchemaFormat(WireModel):
    """JSON valid against ``schema`` (structured outputs); echoed with every field present."""

    model_config = ConfigDict(extra="allow", populate_by_name=True, serialize_by_alias=True)

    type: Literal["json_schema"]
    name: str = Field(min_length=1, max_length=64)
    schema_: dict[str, Any] = Field(alias="schema")
    """The JSON schema; ``schema`` on the wire (``schema_`` only because pydantic reserves the name)."""
    description: str | None = None
    strict: bool = False
    """Whether the output must match ``schema`` exactly (false when not asked for)."""

    @field_validator("strict", mode="before")
    @classmethod
    def _unset_strict(cls, value: Any) -> Any:
        return False if value is None else value


TextFormat = Annotated[TextPlainFormat | JsonObjectFormat | JsonSchemaFormat, Field(discriminator="type")]


class TextConfig(WirePart):
    """How the output text is shaped."""

    format: TextFormat = Field(default_factory=TextPlainFormat)
    verbosity: Literal["low", "medium", "high"] | None = None


class ReasoningConfig(WirePart):
    """Reasoning effort and summary mode, for models that reason."""

    effort: Literal["none", "minimal", "low", "medium", "high", "xhigh", "max"] | None = None
    summary: Literal["auto", "concise", "detailed"] | None = None
    generate_summary: Literal["auto", "concise", "detailed"] | None = None
    context: Literal["auto", "current_turn", "all_turns"] | None = None
    """Which reasoning items the model reads back on later turns (only ``auto`` here: see check_request)."""
    mode: str | None = None
    """``standard`` or ``pro`` execution (only ``standard`` here)."""


class ImageOptions(WirePart):
    """Request-level image options (openai 3.57)."""

    context_compression: Literal["auto", "enabled", "disabled"] | None = None


class AccessPrograms(WirePart):
    """Domain access programs a request asks for (openai 3.57); echoed on the response."""

    cyber: Literal["standard", "daybreak_blue", "daybreak_red"] | None = None


class PromptCacheOptions(WirePart):
    """How the request's prefix is cached (openai 3.57): see docs/api.md for what each does here."""

    mode: Literal["implicit", "explicit"] = "implicit"
    ttl: Literal["30m", "12h"] = "30m"
    prewarm: bool = False
    comparison_response_id: str | None = None


class ModerationMode(WirePart):
    """What a moderation result does to one side of a response."""

    mode: Literal["score", "block"]


class ModerationPolicy(WirePart):
    input: ModerationMode | None = None
    output: ModerationMode | None = None


class ModerationOptions(WirePart):
    """``moderation`` (openai 3.57): the moderation model, and what its results do (default: score both)."""

    model: str
    policy: ModerationPolicy | None = None


class ModerationRequest(WirePart):
    """``POST /v1/moderations``: a text, several, or OpenAI's multi-modal parts (``{"type": "text", ...}``)."""

    input: str | list[str | dict[str, Any]]
    model: str | None = None

    def texts(self) -> list[str]:
        """The texts to judge, one per input; a part that is not text is a 400 naming it."""
        if isinstance(self.input, str):
            return [self.input]
        texts: list[str] = []
        for index, entry in enumerate(self.input):
            if isinstance(entry, str):
                texts.append(entry)
            elif entry.get("type") == "text" and isinstance(entry.get("text"), str):
                texts.append(entry["text"])
            else:
                raise InvalidRequest(
                    "Only text is moderated here: the moderation models this server serves do not read images.",
                    param=f"input[{index}]", code="unsupported_value",
                )  # fmt: skip
        return texts


class BackgroundOptions(WirePart):
    """When background work must be done by (openai 3.57)."""

    completion_window: Literal["soonest", "2h", "8h"] | None = None
    continuation_id: str | None = None


class ConversationRef(WireModel):
    """``conversation`` given as an object."""

    id: str


class ContextManagement(WirePart):
    """One server-side context management entry; ``compaction`` is the one there is."""

    type: Literal["compaction"]
    compact_threshold: int | None = Field(default=None, ge=1)


def _text_from_response_format(body: dict[str, Any]) -> dict[str, Any]:
    """Chat Completions' ``response_format`` (OpenVINO's, vLLM's) as ``text.format``, which is
    what is honoured and echoed; giving both is a 400 (``check_request``), since they could disagree."""
    text = body.get("text")
    if "response_format" not in body or (isinstance(text, dict) and text.get("format") is not None):
        return body  # both given: left for check_request's 400
    body = dict(body)
    fmt = body.pop("response_format")
    if fmt is None:
        return body
    if isinstance(fmt, dict) and fmt.get("type") == "json_schema" and isinstance(fmt.get("json_schema"), dict):
        fmt = {"type": "json_schema", "name": "response", **fmt["json_schema"]}
    body["text"] = {**(text if isinstance(text, dict) else {}), "format": fmt}
    return body


class StreamOptions(WirePart):
    """``stream_options``: ``include_obfuscation`` pads delta events (see :func:`obfuscated`)."""

    include_obfuscation: StrictBool | None = None


class MultiAgentConfig(WireModel):
    """Hosted multi-agent (openai's beta ``responses.create``): the server runs the root agent and the
    subagents it spawns in one response."""

    enabled: StrictBool
    max_concurrent_subagents: int | None = Field(default=None, ge=1)
    """Subagents at once, across the tree (the root not counted); default 3."""


class CreateResponseRequest(WireModel):
    """Every field the seeds name; unknown fields are accepted and ignored."""

    @model_validator(mode="before")
    @classmethod
    def _response_format(cls, value: Any) -> Any:
        return _text_from_response_format(value) if isinstance(value, dict) else value

    @property
    def obfuscates(self) -> bool:
        """Whether a stream's delta events carry ``obfuscation`` padding: asked with
        ``stream_options.include_obfuscation: true`` (off unless asked; docs/api.md says why)."""
        return self.stream_options is not None and self.stream_options.include_obfuscation is True

    model: str = Field(min_length=1)
    input: str | list[Item] | None = None
    instructions: str | None = None
    tools: list[Tool] = Field(default_factory=list)
    tool_choice: ToolChoice = "auto"
    parallel_tool_calls: bool = True
    max_output_tokens: int | None = Field(default=None, ge=1)
    max_tool_calls: int | None = Field(default=None, ge=0)
    temperature: float | None = Field(default=None, ge=0, le=2)
    top_p: float | None = Field(default=None, gt=0, le=1)
    """In (0, 1], as OpenVINO checks it."""
    top_logprobs: int | None = Field(default=None, ge=0, le=20)
    stream: bool = False
    stream_options: StreamOptions | None = None
    store: bool = True
    background: bool = False
    previous_response_id: str | None = None
    conversation: str | ConversationRef | None = None
    metadata: Metadata | None = None
    include: list[str] | None = None
    reasoning: ReasoningConfig | None = None
    text: TextConfig | None = None
    truncation: Literal["auto", "disabled"] = "disabled"
    prompt_cache_key: str | None = None
    prompt_cache_retention: Literal["in_memory", "24h"] | None = None
    """Deprecated by OpenAI for ``prompt_cache_options.ttl``; echoed as ``ttl`` is (the caches here are not timed)."""
    safety_identifier: str | None = Field(default=None, max_length=128)
    service_tier: Literal["auto", "default", "flex", "scale", "priority", "fast", "ultrafast"] | None = None
    image: ImageOptions | None = None
    access_programs: AccessPrograms | None = None
    background_options: BackgroundOptions | None = None
    prompt_cache_options: PromptCacheOptions | None = None
    moderation: ModerationOptions | None = None
    multi_agent: MultiAgentConfig | None = None
    user: str | None = None
    # Sampling extras of SGLang / vLLM / OpenVINO (seeds 000, 004).
    top_k: int | None = None
    min_p: float | None = Field(default=None, ge=0, lt=1)
    """In [0, 1), as OpenVINO checks it."""
    repetition_penalty: float | None = Field(default=None, gt=0)
    frequency_penalty: float | None = Field(default=None, ge=-2, le=2)
    presence_penalty: float | None = Field(default=None, ge=-2, le=2)
    context_management: list[ContextManagement] | None = None
    """Server-side context management, e.g. ``[{"type": "compaction", "compact_threshold": 200000}]``."""

    def compact_threshold(self) -> int | None:
        """The input size (tokens) from which a create compacts its context first, if asked."""
        for entry in self.context_management or []:
            if entry.type == "compaction" and entry.compact_threshold is not None:
                return entry.compact_threshold
        return None

    stop: str | list[str] | None = None
    seed: int | None = Field(default=None, ge=0, le=4294967295)
    """In [0, 2**32 - 1], as OpenVINO checks it (llama.cpp's seed is 32 bits)."""
    n: int | None = Field(default=None, ge=1)
    """How many outputs; only 1 has a wire shape in the Responses API (others are a 400)."""
    best_of: int | None = Field(default=None, ge=1)
    """Beam width (OpenVINO); beam search is not run here, so only 1 is accepted."""
    length_penalty: float | None = None
    """Beam search's length exponent (OpenVINO); without beam search only 1.0 (no penalty) is accepted."""
    logprobs: bool | None = None
    """Return each output token's log probability (OpenVINO's and Chat Completions' switch; the same as
    ``include: ["message.output_text.logprobs"]``)."""
    chat_template_kwargs: dict[str, Any] | None = None
    """Variables for the model's chat template, e.g. ``{"enable_thinking": false}`` (vLLM, SGLang, OpenVINO)."""
    skip_special_tokens: bool | None = None
    """False keeps special tokens (``<|im_end|>``) in the text (vLLM, OpenVINO); true by default."""
    ignore_eos: bool | None = None
    """Keep generating past the model's end-of-sequence token, up to ``max_output_tokens`` (OpenVINO, vLLM)."""
    include_stop_str_in_output: bool | None = None
    """Keep the ``stop`` string that ended the output at its end (OpenVINO, vLLM)."""

    @field_validator("stop")
    @classmethod
    def _stop_limits(cls, value: str | list[str] | None) -> str | list[str] | None:
        if isinstance(value, list) and len(value) > 4:
            raise ValueError("at most 4 stop sequences are allowed")
        return value

    @property
    def stop_sequences(self) -> list[str]:
        """``stop`` as a list, empty when unset."""
        if self.stop is None:
            return []
        return [self.stop] if isinstance(self.stop, str) else list(self.stop)

    @property
    def wants_logprobs(self) -> bool:
        """Whether the output text's log probabilities were asked for, in any of the three ways."""
        asked = "message.output_text.logprobs" in (self.include or [])
        return asked or bool(self.logprobs) or bool(self.top_logprobs)

    @property
    def reasoning_summary(self) -> str | None:
        """The summary asked for: ``reasoning.summary`` (or its older ``generate_summary``); where neither
        is given, ``auto`` for a request that turns thinking on by ``chat_template_kwargs.enable_thinking``,
        OpenVINO's switch, whose clients read the reasoning as its summary (OVMS ignores ``summary``)."""
        asked = self.reasoning
        if asked is not None and (asked.summary or asked.generate_summary):
            return asked.summary or asked.generate_summary
        kwargs = self.chat_template_kwargs
        return "auto" if kwargs is not None and kwargs.get("enable_thinking") is True else None

    @property
    def conversation_id(self) -> str | None:
        """``conversation`` as a plain id, whichever form it was given in."""
        if isinstance(self.conversation, ConversationRef):
            return self.conversation.id
        return self.conversation

    def revised(self, changes: dict[str, Any]) -> CreateResponseRequest:
        """This request with ``changes`` (wire-form values), validated again as a body would be (a
        ``ValidationError`` for what is not valid): for what the server fills in from elsewhere (a
        prompt, a configuration update, queued steering input)."""
        body = self.model_dump(mode="json", by_alias=True, exclude_none=True)
        return type(self).model_validate({**body, **changes})

    def input_after(self, first: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """The wire form of an ``input`` that is ``first``, then this request's own input."""
        own = self.input
        if isinstance(own, str):
            return [*first, {"role": "user", "content": own}]
        return [*first, *(item.model_dump(mode="json", by_alias=True, exclude_none=True) for item in own or ())]
