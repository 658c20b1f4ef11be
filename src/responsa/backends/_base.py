"""The backend interface: a model turns a :class:`ModelRequest` into a stream of :class:`ModelEvent`,
delivered in batches: the events that are ready together (one network read, one sampled token).

Backends know nothing of responses, storage or HTTP. They raise the protocol's errors
(:class:`~responsa.protocol.RateLimited`, :class:`~responsa.protocol.ServiceUnavailable`,
:class:`~responsa.protocol.ModelError`); before the first event these become HTTP errors, after it
a ``response.failed``.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import AsyncIterator, Mapping, Sequence
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass, field, replace
from typing import Any, Literal

from responsa.protocol import (
    Capability,
    FunctionCall,
    FunctionCallOutput,
    FunctionTool,
    InvalidRequest,
    Item,
    Message,
    Reasoning,
    TextFormat,
    item_text,
)

__all__ = [
    "Backend",
    "Finish",
    "FinishReason",
    "HiddenReasoning",
    "HostedCall",
    "ModelEvent",
    "ModelRequest",
    "ReasoningDelta",
    "ReasoningSummaryDelta",
    "Sampling",
    "TextDelta",
    "TokenUsage",
    "ToolCallDelta",
    "ToolMode",
    "WorkerState",
    "check_fits",
    "estimate_tokens",
    "one_at_a_time",
    "read_texts",
    "reasoning_text",
]

_TEMPLATE_TOKENS_PER_ITEM = 4
"""Role markers and separators a chat template adds around each message."""

FinishReason = Literal["stop", "length", "tool_calls", "content_filter"]
ToolMode = Literal["auto", "none", "required"]


@dataclass(frozen=True)
class Sampling:
    """Sampling controls; ``None`` means the backend's default."""

    temperature: float | None = None
    top_p: float | None = None
    top_k: int | None = None
    min_p: float | None = None
    repetition_penalty: float | None = None
    frequency_penalty: float | None = None
    presence_penalty: float | None = None
    seed: int | None = None
    stop: tuple[str, ...] = ()
    ignore_eos: bool = False
    """Generate past the end-of-sequence token, until ``max_output_tokens``."""
    include_stop: bool = False
    """Keep the stop string that ended the output."""

    def or_defaults(self, defaults: Sampling) -> Sampling:
        """These controls, each of :data:`SAMPLING_CONTROLS` left out (None) taken from ``defaults``."""
        unset = {name: getattr(defaults, name) for name in SAMPLING_CONTROLS if getattr(self, name) is None}
        return replace(self, **unset)


SAMPLING_CONTROLS = ("temperature", "top_p", "top_k", "min_p", "repetition_penalty", "frequency_penalty",
                     "presence_penalty")  # fmt: skip
"""The controls a model can have defaults for (a model file's entry, the packaged model's card)."""

SAMPLING_NUMBERS = (*SAMPLING_CONTROLS, "seed")
"""The numeric fields of :class:`Sampling`: each a request field of the same name, and the Chat
Completions field an upstream is sent (vLLM's and SGLang's extras among them)."""


@dataclass
class ModelRequest:
    """One model turn: the whole context as typed items, and what the model may do with it.

    ``tools`` are every definition the model reads; ``allowed_tools`` narrows what it may call (the
    definitions stay, so a prompt's cached prefix holds: Open Responses' ``allowed_tools``);
    ``forced_tool`` names the one function it must call, if any. Not frozen, though never changed:
    one is made per turn, and a frozen dataclass's ``__init__`` of its 26 fields costs 4x as much."""

    model: str
    instructions: str | None
    items: Sequence[Item]
    tools: Sequence[FunctionTool] = ()
    hosted_tools: Sequence[str] = ()
    """Built-in tool types the request offers (``web_search``, ``file_search``, ...)."""
    tool_mode: ToolMode = "auto"
    forced_tool: str | None = None
    allowed_tools: frozenset[str] | None = None
    """The names of ``tools`` the model may call, where not all (``None``)."""
    parallel_tool_calls: bool = True
    max_tool_calls: int | None = None
    text_format: TextFormat | None = None
    max_output_tokens: int | None = None
    sampling: Sampling = field(default_factory=Sampling)
    fault: str | None = None
    """A failure the client asked the simulator to inject (``x-responsa-fault``); others ignore it."""
    streaming: bool = True
    """Whether the client watches tokens arrive; when False a backend may produce the output at once."""
    reasoning_effort: str | None = None
    reasoning_summary: str | None = None
    tool_grammars: Mapping[str, tuple[str, str]] = field(default_factory=dict)
    """Custom tools whose input follows a grammar, by tool name: ``(syntax, definition)``, syntax
    ``lark`` or ``regex``. Backends that can decode under a grammar hold a forced call to it."""
    encrypted_reasoning: bool = False
    """The client asked for ``reasoning.encrypted_content`` (to pass reasoning back statelessly)."""
    reads_reasoning: bool = False
    """The model reads back the reasoning items in ``items`` (``reasoning.context``: its
    ``reasoning_text``), where the backend's model has a place for them; else none is shown."""
    logprobs: int | None = None
    """Log probabilities of the output tokens were asked for, with this many alternatives each
    (``top_logprobs``, 0 for none); None when not asked."""
    template_kwargs: Mapping[str, Any] = field(default_factory=dict)
    """Extra variables for the model's chat template (``chat_template_kwargs``: ``enable_thinking``)."""
    skip_special_tokens: bool = True
    """Leave special tokens (``<|im_end|>``) out of the text; False shows them, as vLLM and OpenVINO do."""
    cache_key: str | None = None
    """``prompt_cache_key``: requests sharing it go to the worker that holds their prefix, where a
    backend has several."""
    reuse_prefix: bool = True
    """Whether a cached prefix may be read (not for ``prompt_cache_options.mode: explicit`` without
    breakpoints)."""
    end_user: str | None = None
    """Who the end user is, for an upstream's abuse monitoring: ``user``, else ``safety_identifier``
    (mlxcel's rule)."""
    safety_identifier: str | None = None

    def callable_tools(self) -> list[FunctionTool]:
        """The tools the model may call: ``tools`` under ``allowed_tools``."""
        allowed = self.allowed_tools
        return list(self.tools) if allowed is None else [tool for tool in self.tools if tool.name in allowed]

    def may_call(self, name: str) -> bool:
        """Whether a call of ``name`` keeps to the tool choice (``none``, a forced tool, ``allowed_tools``)."""
        if self.tool_mode == "none":
            return False
        if self.forced_tool is not None:
            return name == self.forced_tool
        return self.allowed_tools is None or name in self.allowed_tools


@dataclass(slots=True)
class TextDelta:
    """More visible output text. Not frozen, though never changed: one is made per token, and a frozen
    dataclass's ``__init__`` costs twice as much."""

    text: str
    logprobs: tuple[dict[str, Any], ...] = ()
    """Its tokens' log probabilities (``token``, ``logprob``, ``bytes``, ``top_logprobs``), when the
    request asked for them (``ModelRequest.logprobs``)."""


@dataclass(slots=True)
class ReasoningDelta:
    """More raw reasoning text (what open models put in ``reasoning_content`` or ``<think>``). Not
    frozen, though never changed: one is made per token (see :class:`TextDelta`)."""

    text: str


@dataclass(slots=True)
class RefusalDelta:
    """More of a refusal: the model declines to answer (an upstream's ``delta.refusal``), shown as a
    message's ``refusal`` part rather than its text."""

    text: str


@dataclass(frozen=True)
class HiddenReasoning:
    """The model reasoned without showing it: a reasoning item, maybe with an opaque blob to pass back."""

    encrypted_content: str | None = None


@dataclass(frozen=True)
class HostedCall:
    """The model used a built-in tool (``web_search_call``, ``code_interpreter_call``, ...): the item's
    ``type`` and its fields, complete with results."""

    item_type: str
    fields: dict[str, Any]


@dataclass(frozen=True)
class ReasoningSummaryDelta:
    """More of a reasoning summary (what hosted reasoning models show instead of raw reasoning)."""

    text: str


@dataclass(slots=True)
class ToolCallDelta:
    """A piece of tool call ``index``; ``name`` and ``call_id`` come with its first piece. Not frozen,
    though never changed: one is made per token of the arguments (see :class:`TextDelta`)."""

    index: int
    arguments: str
    name: str | None = None
    call_id: str | None = None


@dataclass(frozen=True)
class TokenUsage:
    input_tokens: int
    output_tokens: int
    cached_tokens: int = 0
    reasoning_tokens: int = 0


@dataclass(frozen=True)
class Finish:
    """The last event of every stream."""

    reason: FinishReason
    usage: TokenUsage


ModelEvent = (
    TextDelta
    | ReasoningDelta
    | RefusalDelta
    | HiddenReasoning
    | ReasoningSummaryDelta
    | ToolCallDelta
    | HostedCall
    | Finish
)


def read_texts(item: Item) -> tuple[str, ...]:
    """The text a model reads of an item: a message's or tool output's text, a call's name and
    arguments; nothing for other items. What token counts are taken over."""
    if isinstance(item, Message | FunctionCallOutput):
        return (item_text(item),)
    if isinstance(item, FunctionCall):
        return (item.name, item.arguments)
    return ()


def reasoning_text(item: Reasoning) -> str:
    """What a model reads back of its reasoning: its raw text where it was kept, else its summary
    (an encrypted blob alone reads as nothing)."""
    parts = item.content or item.summary
    return "\n".join(part.text for part in parts)


def estimate_tokens(request: ModelRequest) -> int:
    """About four characters a token over what the model reads (instructions, the items' text, other
    items and the tool definitions as JSON), plus the chat template's few tokens per message."""
    characters = len(request.instructions or "")
    for item in request.items:
        texts = read_texts(item)
        characters += sum(map(len, texts)) if texts else len(item.model_dump_json(exclude_none=True))
    characters += sum(len(tool.model_dump_json()) for tool in request.tools)
    return max(1, round(characters / 4) + _TEMPLATE_TOKENS_PER_ITEM * (len(request.items) + 1))


async def one_at_a_time(events: AsyncIterator[ModelEvent]) -> AsyncIterator[list[ModelEvent]]:
    """Each event a batch of its own: for backends that produce events one by one, at their own pace."""
    async for event in events:
        yield [event]


@dataclass(frozen=True)
class WorkerState:
    """One upstream worker as the server page and ``/metrics`` show it."""

    model: str
    url: str
    healthy: bool
    in_flight: int
    latency_ms: float | None
    """Round trip of its last health check; None before the first."""


class Backend(ABC):
    """A source of model output. ``stream`` is a context manager so the upstream always closes. What
    a backend may do besides is a protocol of its own (``_abilities``: ``Embeds``, ``Draws``,
    ``Moderates``, ``Summarizes``, ``Spreads``)."""

    @abstractmethod
    def models(self) -> Sequence[str]:
        """Model names this backend serves."""

    @abstractmethod
    def stream(self, request: ModelRequest) -> AbstractAsyncContextManager[AsyncIterator[list[ModelEvent]]]:
        """Open a generation; its events come in non-empty batches (those ready together: the whole
        pipeline then does its work once per batch, not per token), the last ending with exactly one
        :class:`Finish`."""

    async def count_tokens(self, request: ModelRequest) -> int:
        """The input tokens ``request`` would use. By default an estimate (about four characters a
        token, on what the model would read); backends with a tokenizer override it."""
        return estimate_tokens(request)

    def context_window(self, model: str) -> int | None:
        """How many tokens ``model`` reads and writes in one turn, where known (for ``truncation: auto``)."""
        return None

    def default_max_output_tokens(self, model: str) -> int | None:
        """The output cap of a request that sets none (a small local model's first answer stays short)."""
        return None

    def reads_images(self, model: str) -> bool:
        """Whether ``model`` reads ``input_image`` parts (text-only models get a 400 instead)."""
        return True

    def reasoning_efforts(self, model: str) -> tuple[tuple[str, ...], str | None]:
        """The ``reasoning.effort`` values ``model`` takes and the one it uses by default, for the model
        catalog clients read (Codex's); none where it does not reason or it is not known."""
        return (), None

    def hosted_tools(self) -> frozenset[str]:
        """Built-in tool types this backend can run; requests offering others are refused."""
        return frozenset()

    def simulates_tools(self) -> bool:
        """Whether tools this server would refuse to reach (an unknown vector store, an MCP host the
        policy refuses) are simulated instead, as LLMSim does; only the simulator does."""
        return False

    async def capabilities(self) -> list[Capability]:
        """What it found it can do when the server started (a library, a model file, a service), for
        ``/v1/server`` and ``responsa doctor``; nothing to report by default."""
        return []

    def parallel(self) -> int | None:
        """How many generations it can run at once, where it knows (the embedded model: one);
        None: as many as the server admits."""
        return None

    async def monitor(self) -> None:
        """Background upkeep for the server's lifetime (health checks); most backends need none."""
        return None

    async def aclose(self) -> None:
        """Release connections and threads; called once at shutdown."""
        return None


def check_fits(input_tokens: int, max_output_tokens: int | None, window: int) -> None:
    """400 ``context_length_exceeded`` when the input leaves no room for the answer in ``window``."""
    if input_tokens + (max_output_tokens or 1) > window:
        raise InvalidRequest(
            f"The input ({input_tokens} tokens) and max_output_tokens leave no room in the model's "
            f"context window of {window} tokens.",
            param="input",
            code="context_length_exceeded",
        )
