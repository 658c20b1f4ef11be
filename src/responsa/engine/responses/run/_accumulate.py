"""Model events → output items and stream events. Synchronous and IO-free: test it by feeding lists.

The builder owns the response's state machine (in_progress → completed / incomplete / failed /
cancelled) and each output item's (in_progress → completed / incomplete), and numbers every event
it emits from 0 without gaps.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any, Literal

from responsa.backends import (
    Finish,
    FinishReason,
    HiddenReasoning,
    HostedCall,
    ModelEvent,
    ReasoningDelta,
    ReasoningSummaryDelta,
    RefusalDelta,
    TextDelta,
    TokenUsage,
    ToolCallDelta,
    read_texts,
)
from responsa.protocol import (
    IncompleteDetails,
    InterruptEvent,
    Item,
    Message,
    OutputItemEvent,
    OutputTextDelta,
    Reasoning,
    RefusalDeltaEvent,
    ResponsaError,
    ResponseError,
    ResponseObject,
    StreamEvent,
    new_id,
)

from ...output import Emitter, Timeline, add_usage, close_reasoning, reasoning_delta, usage_of
from ...tools import (
    OpenCall,
    Recorded,
    ToolPlan,
    ToolRegistry,
    client_kinds,
    hosted_event,
    open_call,
    reported_call,
)
from ..features._features import FeatureRun
from ._open_items import (
    ItemEnd,
    OpenItem,
    Phase,
    ReadyMessage,
    closed_message,
    message_ahead,
    new_message,
    refusal_opened,
)
from ._server_work import ServerWork

__all__ = ["OutputBuilder"]


class OutputBuilder:
    """Builds ``response.output`` from model events and yields the matching stream events.

    A tool call is its kind's (found by the model-visible name's route); the builder feeds it the
    arguments and, when the kind says the server runs the call, keeps the run for the loop to take
    (``server``, a ``ServerWork``; ``_server_calls.serve_calls`` runs them). It does no IO."""

    def __init__(
        self, response: ResponseObject, tools: ToolPlan | None = None, timeline: Timeline | None = None
    ) -> None:
        """``tools``: the request's (None: client-run kinds only, no tools offered)."""
        self.emitter = Emitter(response, timeline)
        self.response = response
        self._open: OpenItem | None = None
        self.finished = False
        self._tools = tools if tools is not None else ToolPlan(ToolRegistry(client_kinds()))
        self._usage: TokenUsage | None = None
        self._reason: FinishReason = "stop"
        self.server = ServerWork(self.emitter)
        """The calls the server runs for this response."""
        self.needs_client = False
        """A call for the client to run, or an approval to give: it ends the agentic loop."""
        self.awaiting: list[Item] = []
        """Those calls (and approval requests), whose answers the client must send to go on."""
        self.answered_in_turn = False
        """The client answered them into the running response (see :meth:`answered`) this turn."""
        self._ready: ReadyMessage | None = None
        """A message and its opening events built ahead, while the model thinks (see :meth:`ready_for_text`)."""
        self._turn_output: int | None = None
        """Where the output of the model turn in progress begins (None between turns)."""
        self.features: tuple[FeatureRun, ...] = ()
        """The request's features, told of each item the model made as it ends (``item_done``)."""

    @property
    def timeline(self) -> Timeline:
        return self.emitter.timeline

    def start(self) -> list[StreamEvent]:
        """``response.created``, ``response.queued`` for a queued (background) one, ``response.in_progress``."""
        if self.response.status != "queued":
            return self.emitter.lifecycle("response.created", "response.in_progress")
        events = self.emitter.lifecycle("response.created", "response.queued")
        self.response.status = "in_progress"
        return events + self.emitter.lifecycle("response.in_progress")

    def record(self, recorded: Recorded) -> list[StreamEvent]:
        """An item a tool kind made before the model ran; a call it left for the server waits to run."""
        where = self.emitter.place(recorded.item)
        if recorded.run is not None:
            self.server.wait(recorded.run, where)
        return self.emitter.emit_all(recorded.events(where))

    def feed_all(self, batch: Sequence[ModelEvent]) -> list[StreamEvent]:
        """The stream events of a batch of model events (those of one network read). Most are tokens
        of the message being written: each adds its delta here, with no other step."""
        events: list[StreamEvent] = []
        for event in batch:
            opened = self._open
            if type(event) is TextDelta and not event.logprobs and opened is not None and type(opened.item) is Message:
                events.append(self._delta(opened, event.text))
            else:
                events += self.feed(event)
        return events

    def feed(self, event: ModelEvent) -> list[StreamEvent]:
        """The stream events one model event causes; a :class:`Finish` ends the response."""
        if isinstance(event, TextDelta):
            return self._text(event.text, event.logprobs)
        if isinstance(event, ToolCallDelta):
            return self._tool_call(event)
        if isinstance(event, ReasoningDelta):
            return self._reasoning(event.text, summary=False)
        if isinstance(event, ReasoningSummaryDelta):
            return self._reasoning(event.text, summary=True)
        if isinstance(event, HiddenReasoning):
            return self._hidden_reasoning(event.encrypted_content)
        if isinstance(event, HostedCall):
            return self._hosted_call(event)
        if isinstance(event, RefusalDelta):
            return self._refusal(event.text)
        return self.end_turn(event)

    def _switch_to(self, item: Item, tool_index: int | None = None, call: OpenCall | None = None) -> list[StreamEvent]:
        events = self._close_open("completed")
        where, added = self.emitter.added(item)
        self._open = OpenItem(where, item, tool_index=tool_index, call=call)
        events.append(added)
        return events

    def begin_turn(self) -> None:
        """A model turn begins: what it writes is placed from here (see :meth:`cut_turn`)."""
        self._turn_output = len(self.response.output)
        self.answered_in_turn = False

    def cut_turn(self) -> tuple[int, str] | None:
        """The turn in progress, which a stop cuts before the model counted it: where its output begins,
        and the text it wrote (its items', the open one's so far); None between turns."""
        start = self._turn_output
        if start is None:
            return None
        written = [text for item in self.response.output[start:] for text in read_texts(item)]
        if self._open is not None:
            written += [*self._open.chunks, *self._open.summary_chunks]
        return start, "".join(written)

    def count(self, usage: TokenUsage) -> None:
        """Add ``usage`` to the response's (a cut turn's, see :meth:`cut_turn`)."""
        self._usage = usage if self._usage is None else add_usage(self._usage, usage)

    def ready_for_text(self) -> None:
        """Build the message the model's first text would open, and its two opening events, before that
        text arrives: the loop calls this while the model thinks, so the first token reaches the client
        sooner. Left unused (a message id spent) when the model calls a tool or reasons first."""
        if self._open is None:
            self._ready = ready = self._message_ahead()
            if ready.opening:  # the events are read: their JSON is written ahead too
                self.emitter.encode_ahead(ready.opening)

    def _message_ahead(self) -> ReadyMessage:
        """A message for the next place in the output, with its opening events (not yet numbered)."""
        return message_ahead(len(self.response.output), self.emitter if self.emitter.read else None)

    def _open_message(self) -> list[StreamEvent]:
        events = self._close_open("completed")
        ready, self._ready = self._ready, None
        if ready is None or ready.where["output_index"] != len(self.response.output):  # something came first
            ready = self._message_ahead()
        self.emitter.place(ready.message)
        self._open = OpenItem(ready.where, ready.message)
        if not ready.opening:
            self.timeline.item_at(True, ready.where["output_index"], ready.message)
        return events + self.emitter.emit_all(ready.opening)

    def _text(self, text: str, logprobs: Sequence[dict[str, Any]] = ()) -> list[StreamEvent]:
        events: list[StreamEvent] = []
        if self._open is None or not isinstance(self._open.item, Message) or self._open.refusal:
            events = self._open_message()
        opened = self._open
        assert opened is not None
        if logprobs:  # asked for: rare, so the common delta (one per token) is built without them
            opened.chunks.append(text)
            opened.logprobs += logprobs
            delta = OutputTextDelta(item_id=opened.where["item_id"], output_index=opened.where["output_index"],
                                    content_index=0, delta=text, logprobs=list(logprobs))  # fmt: skip
            events.append(self.emitter.emit(delta))
        else:
            events.append(self._delta(opened, text))
        return events

    def _delta(self, opened: OpenItem, text: str) -> StreamEvent:
        """A token of the open message: its text kept, its delta emitted."""
        opened.chunks.append(text)
        where = opened.where
        return self.emitter.emit(OutputTextDelta.of_token(where["item_id"], where["output_index"], text))

    def _refusal(self, text: str) -> list[StreamEvent]:
        """The model declines: a message whose one part is its ``refusal``."""
        events: list[StreamEvent] = []
        if self._open is None or not self._open.refusal:
            events += self._switch_to(new_message())
            assert self._open is not None
            self._open.refusal = True
            events.append(self.emitter.emit(refusal_opened(self._open.where)))
        opened = self._open
        opened.chunks.append(text)
        return [*events, self.emitter.emit(RefusalDeltaEvent(content_index=0, delta=text, **opened.where))]

    def _tool_call(self, delta: ToolCallDelta) -> list[StreamEvent]:
        events: list[StreamEvent] = []
        if self._open is None or self._open.tool_index != delta.index:
            name = delta.name or ""
            call = open_call(self._tools, self._tools.route(name), delta.call_id or new_id("call"))
            events += self._switch_to(call.item, tool_index=delta.index, call=call)
            assert self._open is not None
            events += self.emitter.emit_all(call.opened(self._open.where))
        opened = self._open
        assert opened is not None and opened.call is not None
        if delta.arguments:
            opened.chunks.append(delta.arguments)
            events += self.emitter.emit_all(opened.call.delta(delta.arguments, opened.where))
        return events

    def _reasoning(self, text: str, summary: bool) -> list[StreamEvent]:
        events: list[StreamEvent] = []
        if not text:
            return events
        if self._open is None or not isinstance(self._open.item, Reasoning):
            events += self._switch_to(Reasoning(id=new_id("rs"), summary=[], status="in_progress"))
        opened = self._open
        assert opened is not None
        chunks = opened.summary_chunks if summary else opened.chunks
        events += self.emitter.emit_all(reasoning_delta(opened.where, chunks, text, summary))
        return events

    def _hosted_call(self, call: HostedCall) -> list[StreamEvent]:
        """A built-in tool ran (inside the model's turn): the item with its progress events, at once."""
        events = self._close_open("completed")
        item, phases = reported_call(self._tools.kinds, call.item_type, call.fields)
        where = self.emitter.place(item)
        index = where["output_index"]
        started = item.model_copy(update={"status": "in_progress"})
        added = OutputItemEvent(type="response.output_item.added", output_index=index, item=started)
        progress = [hosted_event(call.item_type, phase, where) for phase in phases]
        done = OutputItemEvent(type="response.output_item.done", output_index=index, item=item.model_copy())
        return events + self.emitter.emit_all([added, *progress, done])

    def _hidden_reasoning(self, encrypted_content: str | None) -> list[StreamEvent]:
        events: list[StreamEvent] = []
        if self._open is None or not isinstance(self._open.item, Reasoning):
            events += self._switch_to(Reasoning(id=new_id("rs"), summary=[], status="in_progress"))
        assert self._open is not None and isinstance(self._open.item, Reasoning)
        self._open.item.encrypted_content = encrypted_content
        return events

    def _close_open(self, status: ItemEnd, phase: Phase | None = "commentary") -> list[StreamEvent]:
        """End the open item. A message followed by more output is ``commentary``; the caller says
        when it is the ``final_answer`` (or neither, when the response fails or is cancelled)."""
        open_item, self._open = self._open, None
        if open_item is None:
            return []
        item, where, text = open_item.item, open_item.where, "".join(open_item.chunks)
        events: list[StreamEvent] = []
        if isinstance(item, Message):
            read = self.emitter.read
            events += self.emitter.emit_all(closed_message(open_item, self.server.annotations, status, phase, read))
            if not read:  # no one reads its events: the timeline marks its end instead
                self.timeline.item_at(False, where["output_index"], item)
                self._item_done(item)
                return events
        elif open_item.call is not None:  # a tool call: its kind fills it, and says what comes next
            closed = open_item.call.close(text, status, where)
            events += self.emitter.emit_all(closed.events)
            self.needs_client = self.needs_client or closed.needs_client
            if closed.needs_client:
                self.awaiting.append(item)
            if closed.run is not None:
                self.server.wait(closed.run, where)
                return events  # done once the server has run it
        elif isinstance(item, Reasoning):
            asked = self.response.reasoning is not None and self.response.reasoning.summary is not None
            ended = close_reasoning(item, where, open_item.chunks, open_item.summary_chunks, asked)
            events += self.emitter.emit_all(ended)
            item.status = status
        self._item_done(item)
        events.append(self.emitter.done(item, where))
        return events

    def answered(self, items: Sequence[Item]) -> list[StreamEvent]:
        """The client's answers to the calls the response waits on, sent into it while it runs
        (``response.inject``): placed after the output so far; the response goes on."""
        events: list[StreamEvent] = []
        for item in items:
            where, added = self.emitter.added(item)
            self._item_done(item)
            events += [added, self.emitter.done(item, where)]
        self.needs_client, self.awaiting, self.answered_in_turn = False, [], True
        return events

    def _item_done(self, item: Item) -> None:
        for feature in self.features:
            feature.item_done(item)

    def end_turn(self, finish: Finish) -> list[StreamEvent]:
        """One model turn is over: close its open item and add up its usage. The response goes on."""
        phase: Phase = "commentary" if finish.reason == "tool_calls" else "final_answer"
        events = self._close_open("incomplete" if finish.reason == "length" else "completed", phase)
        self.count(finish.usage)
        self._reason, self._turn_output = finish.reason, None
        return events

    @property
    def output_tokens(self) -> int:
        """The output tokens of the response's model turns so far."""
        return self._usage.output_tokens if self._usage is not None else 0

    def complete(self, spent: bool = False) -> list[StreamEvent]:
        """End the response: ``completed``, or ``incomplete`` when the last turn hit the token limit or
        the turns spent the response's (``spent``: the model was not asked again)."""
        if self._reason == "length" or spent:
            return self._conclude("incomplete", "max_output_tokens")
        if self._reason == "content_filter":  # the model did not run: moderation blocked the input
            return self._conclude("incomplete", "content_filter")
        return self._conclude("completed")

    def withheld(self) -> list[StreamEvent]:
        """End the response with its output withheld (moderation blocked it): ``incomplete``, with
        reason ``content_filter`` and no output."""
        self.response.output = []
        return self._conclude("incomplete", "content_filter")

    def _conclude(self, status: Literal["completed", "incomplete"], reason: str | None = None) -> list[StreamEvent]:
        """The response's end: its usage, status (with why, if incomplete) and terminal event."""
        if self._usage is not None:
            self.response.usage = usage_of(self._usage)
        self.response.status = status
        if reason is not None:
            self.response.incomplete_details = IncompleteDetails(reason=reason)
        if status == "completed":  # OpenAI's type: present only when the status is completed
            self.response.completed_at = int(time.time())
        self.finished = True
        return self.emitter.lifecycle("response.completed" if status == "completed" else "response.incomplete")

    def finish(self, finish: Finish) -> list[StreamEvent]:
        """End the only turn and the response."""
        return self.end_turn(finish) + self.complete()

    def fail(self, error: ResponsaError) -> list[StreamEvent]:
        """End the response as ``failed`` with ``error``; open items end ``incomplete``."""
        events = self._close_open("incomplete", phase=None)
        self.response.status = "failed"
        self.response.error = ResponseError(code=error.code or "server_error", message=error.message)
        self.finished = True
        return events + self.emitter.lifecycle("response.failed")

    def cancel(self) -> list[StreamEvent]:
        """Stop where we are: open items end ``incomplete`` and the response is ``cancelled``."""
        events = self._close_open("incomplete", phase=None)
        events += self.server.cut()
        self.response.status = "cancelled"
        self.finished = True
        return events

    def settle(self) -> list[StreamEvent]:
        """Close what the model left open (``incomplete``), before the response ends as it is."""
        return self._close_open("incomplete", phase=None)

    def steered(self) -> list[StreamEvent]:
        """Stop for steering: open items end ``incomplete``, and so does the response, with reason
        ``steered`` (its successor, with the steering input, starts next)."""
        events = self._close_open("incomplete", phase=None) + self.server.cut()
        return events + self._conclude("incomplete", "steered")

    def interrupted(self) -> list[StreamEvent]:
        """Stop at the client's interrupt (``discard_partial_items``): taken, said first; the item the
        model was writing is dropped (``response.output_item.interrupted``); the server's calls are
        cut as a cancel cuts them; the response ends ``incomplete``, reason ``interrupted``, with what
        was finished."""
        response_id = self.response.id
        events = self.emitter.emit_all([InterruptEvent(type="response.interrupt.accepted", response_id=response_id)])
        open_item, self._open = self._open, None
        if open_item is not None:
            index = open_item.where["output_index"]
            del self.response.output[index:]  # the open item is the last placed
            events += self.emitter.emit_all([InterruptEvent(
                type="response.output_item.interrupted", response_id=response_id,
                item_id=open_item.where["item_id"], output_index=index)])  # fmt: skip
        events += self.server.cut()
        return events + self._conclude("incomplete", "interrupted")
