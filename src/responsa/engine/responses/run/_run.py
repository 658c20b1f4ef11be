"""One generation in flight and everything it carries from start to the final save."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import AsyncExitStack
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

from responsa import tracing
from responsa.backends import Backend, Finish, FinishReason, ModelEvent, ModelRequest, TokenUsage
from responsa.protocol import (
    CreateResponseRequest,
    EventJson,
    Item,
    ResponsaError,
    ResponseObject,
    StreamEvent,
    obfuscated,
)
from responsa.store import Store

from ...output import Timeline
from ...tools import Replays, ToolPlan, answer_stub, held_to_choice
from ..features._features import FeatureRun
from ._accumulate import OutputBuilder
from ._cancel_signal import CancelSignal
from ._event_log import EventLog

if TYPE_CHECKING:
    from opentelemetry.trace import Span

__all__ = ["Run", "RunContext", "Saving", "model_call_done", "open_model_call"]


@dataclass
class RunContext:
    """What a run knows from the start, for all its turns. Not frozen, though never changed once the
    run starts: ``prior``, the one field set after it is made, is set as the model call is opened (a
    frozen copy cost 3 us a request)."""

    request: CreateResponseRequest
    store: Store
    """The store as the request's tenant sees it."""
    backend: Backend
    tools: ToolPlan
    """The request's tools as the model sees them, each with its kind."""
    unavailable: frozenset[str] = frozenset()
    """Hosted tool types left out of what the model sees (the backend cannot run them, or the server does)."""
    fault: str | None = None
    input_items: list[Item] = field(default_factory=list)
    prior: list[Item] = field(default_factory=list)
    """History and input (compacted, truncated): what the model reads before this response's own output."""
    features: tuple[FeatureRun, ...] = ()
    """The runs of the request features the request names (see ``_features``)."""
    replays: Replays = field(default_factory=Replays)
    """Where the model's view of the context is made: the server's, which keeps those of recent contexts."""

    @property
    def tenant(self) -> str:
        return self.store.tenant


StopReason = Literal["cancelled", "steered", "interrupted", "shut_down"]
_STRENGTH: dict[StopReason, int] = {"cancelled": 0, "steered": 1, "interrupted": 2, "shut_down": 3}


@dataclass
class Saving:
    """How far a run's response is in the store: what the loop (and, for background work, the service)
    has written, so that nothing is written twice and the terminal event waits for the final save."""

    recorded: asyncio.Event | None = None
    """Set once the attempt to write the in-progress row of a streamed response is over."""
    recording: asyncio.Task[None] | None = None
    """The task writing that row, held here (the event loop keeps only weak references to tasks)."""
    inputs_saved: bool = False
    persisted: bool = False
    """The final state is saved (it is, before the terminal event is sent)."""
    discarded: bool = False
    """Nothing of it is to be stored: it was stopped to run again later (a pre-empted batch line)."""
    saved_json: dict[str, Any] | None = None
    """The final state's JSON form, as the store saved it (see ``Store.save_response``)."""
    log: EventLog | None = None
    """Background runs only: every event, for followers here and (via the store) anywhere."""


@dataclass
class Run:
    """One generation in flight: what it knows from the start (``ctx``), the response being built, the
    open model stream, and the little that changes as it goes."""

    ctx: RunContext
    response: ResponseObject
    builder: OutputBuilder
    opening: list[StreamEvent]
    """Events of what happened before the model started (lifecycle, MCP listings, approved calls)."""
    model_events: AsyncIterator[list[ModelEvent]]
    exit_stack: AsyncExitStack
    cancel_requested: CancelSignal = field(default_factory=CancelSignal)
    done: asyncio.Event = field(default_factory=asyncio.Event)
    error: ResponsaError | None = None
    saving: Saving = field(default_factory=Saving)
    """How far its response is in the store."""
    released: bool = False
    """What the run holds (``exit_stack``) is closed."""
    tool_calls_made: int = 0
    turn: AsyncIterator[None] | None = None
    """Background work with a later completion window: yields once it holds a backend slot (see
    ``Admission.later``); its model call is opened only then."""
    span: Span | None = None
    """With tracing on: this response's span, parent of its model calls, tool calls and saves."""
    stopping: StopReason | None = None
    """Why it is to stop, once something asked (:meth:`stop`): the one reason its end is read from."""
    serving_calls: bool = False
    """The server is running the model's calls: a steer waits for the one running to finish."""

    @property
    def tenant(self) -> str:
        return self.ctx.tenant

    def stop(self, reason: StopReason) -> None:
        """Stop at the next safe point for ``reason``: ``cancelled`` (a cancel, here or in another
        process), ``steered`` (it ends ``incomplete``, reason ``steered``, and the caller starts the
        successor with the steering input; a call the server is running finishes first),
        ``interrupted`` (the client's instant interrupt: it ends ``incomplete``, reason
        ``interrupted``, what the model was writing dropped) or ``shut_down`` (it fails,
        ``server_shutdown``). The strongest reason asked wins: a shutdown over an interrupt over a
        steer over a cancel."""
        if self.stopping is None or _STRENGTH[reason] > _STRENGTH[self.stopping]:
            self.stopping = reason
        if reason != "steered" or not self.serving_calls:
            self.cancel_requested.set()

    def steered_between_calls(self) -> bool:
        """Whether the server is to start no more calls: a steer came while one ran."""
        return self.stopping == "steered"

    def required_input(self) -> list[dict[str, Any]]:
        """Stubs of what the client must send back for the response to go on (its calls' outputs, its
        approvals), as ``response.steer.pending`` lists them."""
        stubs = (answer_stub(self.ctx.tools.kinds, item) for item in self.builder.awaiting)
        return [stub for stub in stubs if stub is not None]

    @property
    def event_json(self) -> EventJson:
        """How this run's events are encoded: some were encoded ahead, while the model thought; delta
        events padded when the request asked for stream obfuscation."""
        encode = self.builder.emitter.event_json
        return obfuscated(encode) if self.ctx.request.obfuscates else encode

    def end_span(self) -> None:
        """End the response's span with its outcome and token counts."""
        if self.span is None:
            return
        usage = self.response.usage
        attributes: dict[str, str | int] = {"responsa.status": self.response.status}
        if usage is not None:
            attributes["gen_ai.usage.input_tokens"] = usage.input_tokens
            attributes["gen_ai.usage.output_tokens"] = usage.output_tokens
        tracing.finish(self.span, attributes, self.error.message if self.error is not None else None)


async def open_model_call(
    stack: AsyncExitStack, backend: Backend, request: ModelRequest, timeline: Timeline
) -> AsyncIterator[list[ModelEvent]]:
    """Open a model call that ``stack`` closes, marked on ``timeline``. With tracing on, the call is a
    span, current while it connects (an upstream gets its ``traceparent``) and ended when the call closes."""
    timeline.mark("model.called", model=request.model)
    attributes = {"gen_ai.operation.name": "chat", "gen_ai.request.model": request.model}
    call = tracing.start(f"chat {request.model}", attributes)
    if call is not None:
        stack.callback(call.end)
    with tracing.current(call):
        events = await stack.enter_async_context(backend.stream(request))
    return held_to_choice(events, request) if request.tools else events


NOTHING_USED = TokenUsage(0, 0)


async def model_call_done(
    usage: TokenUsage = NOTHING_USED, reason: FinishReason = "stop"
) -> AsyncIterator[list[ModelEvent]]:
    """The model events of a response the model does not write (a ``generate: false`` one, a
    compaction, whose summary cost ``usage``, or one whose input moderation blocked): its end alone."""
    yield [Finish(reason, usage)]
