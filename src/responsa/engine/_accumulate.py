"""Model events → output items and stream events. Synchronous and IO-free: test it by feeding lists.

The builder owns the response's state machine (in_progress → completed / incomplete / failed /
cancelled) and each output item's (in_progress → completed / incomplete), and numbers every event
it emits from 0 without gaps.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from pydantic import TypeAdapter

from responsa.backends import (
    Finish,
    FinishReason,
    HiddenReasoning,
    HostedCall,
    ModelEvent,
    ReasoningDelta,
    ReasoningSummaryDelta,
    TextDelta,
    TokenUsage,
    ToolCallDelta,
)
from responsa.protocol import (
    ContentPartEvent,
    FileSearchCall,
    HostedToolEvent,
    IncompleteDetails,
    Item,
    McpApprovalRequest,
    McpCall,
    McpCallArgumentsDelta,
    McpCallArgumentsDone,
    Message,
    OutputItemEvent,
    OutputText,
    OutputTextDelta,
    OutputTextDone,
    Reasoning,
    ResponsaError,
    ResponseError,
    ResponseObject,
    StreamEvent,
    new_id,
)

from ._file_search import FILE_SEARCH, FileSearchOutput
from ._mcp_output import McpOutput
from ._reasoning_output import ReasoningOutput
from ._usage import add_usage, usage_of
from .tools import ClientRoute, OpenCall, open_call

__all__ = ["OutputBuilder"]

ItemEnd = Literal["completed", "incomplete"]
Phase = Literal["commentary", "final_answer"]
_HOSTED_PHASES = {
    "web_search_call": "searching",
    "file_search_call": "searching",
    "code_interpreter_call": "interpreting",
    "image_generation_call": "generating",
}
_items: TypeAdapter[Item] = TypeAdapter(Item)
"""A built-in tool's item by its type (``file_search_call`` is typed, other hosted calls kept as sent)."""


@dataclass
class _OpenItem:
    """The output item currently receiving deltas."""

    output_index: int
    item: Item
    chunks: list[str] = field(default_factory=list)
    """Message text, call arguments or raw reasoning, as it arrives."""
    summary_chunks: list[str] = field(default_factory=list)
    tool_index: int | None = None
    call: OpenCall | None = None
    """For a call of a client tool: its kind's handling of the arguments as they stream in."""
    logprobs: list[dict[str, Any]] = field(default_factory=list)
    """For a message: each token's log probability, when the request asked for them."""


class OutputBuilder(McpOutput, FileSearchOutput, ReasoningOutput):
    """Builds ``response.output`` from model events and yields the matching stream events."""

    def __init__(
        self,
        response: ResponseObject,
        mcp_routes: Mapping[str, str] | None = None,
        needs_approval: Callable[[str, str], bool] | None = None,
        client_routes: Mapping[str, ClientRoute] | None = None,
    ) -> None:
        super().__init__(response)
        self._init_searches()
        self._open: _OpenItem | None = None
        self.finished = False
        self._mcp_routes = dict(mcp_routes or {})
        self._client_routes = client_routes or {}
        self._needs_approval = needs_approval or (lambda _label, _name: False)
        self._usage: TokenUsage | None = None
        self._reason: FinishReason = "stop"
        self.approval_requests: list[McpApprovalRequest] = []
        self.client_calls = 0
        """Function calls for the client to run; any of them ends the agentic loop."""

    def start(self) -> list[StreamEvent]:
        """``response.created``, ``response.queued`` for a queued (background) one, ``response.in_progress``."""
        events = [self._lifecycle("response.created")]
        if self.response.status == "queued":
            events.append(self._lifecycle("response.queued"))
            self.response.status = "in_progress"
        return [*events, self._lifecycle("response.in_progress")]

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
        return self.end_turn(event)

    def _switch_to(self, item: Item, tool_index: int | None = None, call: OpenCall | None = None) -> list[StreamEvent]:
        events = self._close_open("completed")
        index = len(self.response.output)
        self.response.output.append(item)
        self._open = _OpenItem(index, item, tool_index=tool_index, call=call)
        events.append(
            self._emit(
                OutputItemEvent(type="response.output_item.added", output_index=index, item=self._snapshot(item))
            )
        )
        return events

    def _text(self, text: str, logprobs: Sequence[dict[str, Any]] = ()) -> list[StreamEvent]:
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
        opened = self._open
        assert opened is not None
        opened.chunks.append(text)
        item_id, index = opened.item.id or "", opened.output_index
        if logprobs:  # asked for: rare, so the common delta (one per token) is built without them
            opened.logprobs += logprobs
            delta = OutputTextDelta(item_id=item_id, output_index=index, content_index=0, delta=text,
                                    logprobs=list(logprobs))  # fmt: skip
        else:
            delta = OutputTextDelta(item_id=item_id, output_index=index, content_index=0, delta=text)
        events.append(self._emit(delta))
        return events

    def _tool_call(self, delta: ToolCallDelta) -> list[StreamEvent]:
        events: list[StreamEvent] = []
        if self._open is None or self._open.tool_index != delta.index:
            item, call = self._new_call(delta)
            events += self._switch_to(item, tool_index=delta.index, call=call)
            assert self._open is not None
            if isinstance(self._open.item, McpCall):
                events.append(
                    self._item_event("response.mcp_call.in_progress", self._open.item, self._open.output_index)
                )
            elif isinstance(self._open.item, FileSearchCall):  # the server's file search
                events.append(self._search_event("in_progress", self._open.item, self._open.output_index))
        assert self._open is not None
        if delta.arguments:
            self._open.chunks.append(delta.arguments)
            where = {"item_id": self._open.item.id or "", "output_index": self._open.output_index}
            if self._open.call is not None:
                events += [self._emit(event) for event in self._open.call.delta(delta.arguments, where)]
            elif isinstance(self._open.item, McpCall):
                events.append(self._emit(McpCallArgumentsDelta(delta=delta.arguments, **where)))
        return events

    def _new_call(self, delta: ToolCallDelta) -> tuple[Item, OpenCall | None]:
        """The item a model's call opens (and, for a client tool, its kind's handling of the call)."""
        name = delta.name or ""
        label = self._mcp_routes.get(name)
        if label == FILE_SEARCH:
            return self._new_search(), None
        if label is None:
            self.client_calls += 1
            call = open_call(self._client_routes.get(name) or ClientRoute("function", name),
                             delta.call_id or new_id("call"))  # fmt: skip
            return call.item, call
        if self._needs_approval(label, name):
            return McpApprovalRequest(id=new_id("mcpr"), server_label=label, name=name, arguments=""), None
        return McpCall(id=new_id("mcp"), server_label=label, name=name, arguments="", status="in_progress"), None

    def _reasoning(self, text: str, summary: bool) -> list[StreamEvent]:
        events: list[StreamEvent] = []
        if not text:
            return events
        if self._open is None or not isinstance(self._open.item, Reasoning):
            events += self._switch_to(Reasoning(id=new_id("rs"), summary=[], status="in_progress"))
        assert self._open is not None and isinstance(self._open.item, Reasoning)
        chunks = self._open.summary_chunks if summary else self._open.chunks
        return events + self._reasoning_delta(self._open.item, self._open.output_index, chunks, text, summary)

    def _hosted_call(self, call: HostedCall) -> list[StreamEvent]:
        """A built-in tool ran (inside the model's turn): the item with its progress events, at once."""
        events = self._close_open("completed")
        prefix = call.item_type.removesuffix("_call")
        item = _items.validate_python({"type": call.item_type, "id": new_id(prefix[:2] or "ht"), **call.fields})
        index = len(self.response.output)
        self.response.output.append(item)
        where = {"item_id": item.id or "", "output_index": index}
        started = item.model_copy(update={"status": "in_progress"})
        events.append(self._emit(OutputItemEvent(type="response.output_item.added", output_index=index, item=started)))
        for phase in ("in_progress", _HOSTED_PHASES[call.item_type], "completed"):
            kind = f"response.{call.item_type}.{phase}"
            events.append(self._emit(HostedToolEvent.model_validate({"type": kind, **where})))
        events.append(
            self._emit(OutputItemEvent(type="response.output_item.done", output_index=index, item=item.model_copy()))
        )
        return events

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
        item, index, text = open_item.item, open_item.output_index, "".join(open_item.chunks)
        item_id = item.id or ""
        events: list[StreamEvent] = []
        if isinstance(item, Message):
            logprobs = open_item.logprobs
            part = OutputText.model_validate({"text": text, "logprobs": logprobs, "annotations": self.citations(text)})
            item.content = [part]
            item.phase = phase
            events.append(
                self._emit(
                    OutputTextDone(item_id=item_id, output_index=index, content_index=0, text=text, logprobs=logprobs)
                )
            )
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
        elif open_item.call is not None:  # a client tool's call: its kind fills it
            where = {"item_id": item_id, "output_index": index}
            events += [self._emit(event) for event in open_item.call.close(text, where)]
            item.status = status  # type: ignore[union-attr]  # every call item has one
        elif isinstance(item, McpCall):
            item.arguments = text
            events.append(self._emit(McpCallArgumentsDone(item_id=item_id, output_index=index, arguments=text)))
            if status == "completed":
                self._call_asked(item, index)
                return events  # done once executed: see call_finished
        elif isinstance(item, McpApprovalRequest):
            item.arguments = text
            self.approval_requests.append(item)
        elif isinstance(item, FileSearchCall):  # the server's file search: done once it has run
            if status == "completed":
                self._search_asked(item, index, text)
                return events
            item.status = status
        elif isinstance(item, Reasoning):
            events += self._close_reasoning(item, index, open_item.chunks, open_item.summary_chunks)
        if isinstance(item, Message | Reasoning):
            item.status = status
        events.append(
            self._emit(OutputItemEvent(type="response.output_item.done", output_index=index, item=self._snapshot(item)))
        )
        return events

    def end_turn(self, finish: Finish) -> list[StreamEvent]:
        """One model turn is over: close its open item and add up its usage. The response goes on."""
        phase: Phase = "commentary" if finish.reason == "tool_calls" else "final_answer"
        events = self._close_open("incomplete" if finish.reason == "length" else "completed", phase)
        self._usage = finish.usage if self._usage is None else add_usage(self._usage, finish.usage)
        self._reason = finish.reason
        return events

    def complete(self) -> list[StreamEvent]:
        """End the response: ``completed``, or ``incomplete`` when the last turn hit the token limit."""
        if self._usage is not None:
            self.response.usage = usage_of(self._usage)
        if self._reason == "length":
            self.response.status = "incomplete"
            self.response.incomplete_details = IncompleteDetails(reason="max_output_tokens")
        else:
            self.response.status = "completed"
        self.response.completed_at = int(time.time())
        self.finished = True
        return [self._lifecycle("response.incomplete" if self._reason == "length" else "response.completed")]

    def finish(self, finish: Finish) -> list[StreamEvent]:
        """End the only turn and the response."""
        return self.end_turn(finish) + self.complete()

    def fail(self, error: ResponsaError) -> list[StreamEvent]:
        """End the response as ``failed`` with ``error``; open items end ``incomplete``."""
        events = self._close_open("incomplete", phase=None)
        self.response.status = "failed"
        self.response.error = ResponseError(code=error.code or "server_error", message=error.message)
        self.finished = True
        events.append(self._lifecycle("response.failed"))
        return events

    def cancel(self) -> list[StreamEvent]:
        """Stop where we are: open items end ``incomplete`` and the response is ``cancelled``."""
        events = self._close_open("incomplete", phase=None)
        self.response.status = "cancelled"
        self.finished = True
        return events
