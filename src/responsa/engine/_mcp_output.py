"""MCP items in a response's output: listings and calls made by the server, with their events."""

from __future__ import annotations

from collections.abc import AsyncIterator
from functools import partial
from typing import Any

from responsa import tracing
from responsa.protocol import (
    McpCall,
    McpCallArgumentsDone,
    McpItemEvent,
    McpListTools,
    OutputItemEvent,
    ResponseObject,
    StreamEvent,
)

from ._emitter import Emitter
from ._server_calls import ServerTools

__all__ = ["McpOutput"]


class McpOutput(Emitter):
    """Records MCP listings and calls; the model's MCP calls wait in ``server_calls`` to be run."""

    def __init__(self, response: ResponseObject) -> None:
        super().__init__(response)
        self._calls_by_id: dict[str, int] = {}

    def _call_asked(self, call: McpCall, index: int) -> None:
        """The model finished writing an MCP call: it waits to be run."""
        self._calls_by_id[call.id or ""] = index
        self.server_calls.append(partial(self._run_call, call))

    async def _run_call(self, call: McpCall, tools: ServerTools) -> AsyncIterator[list[StreamEvent]]:
        assert tools.mcp is not None  # only MCP routes make MCP calls
        self.timeline.mark("mcp.call.started", item_id=call.id, name=call.name)
        with tracing.current(tools.span):
            outcome = await tools.mcp.call(call.server_label, call.name, call.arguments)
        self.timeline.mark("mcp.call.ended", item_id=call.id, error=outcome.error is not None)
        yield self.call_finished(call, outcome.output, outcome.error)

    def _item_event(self, kind: str, item: McpCall | McpListTools, index: int) -> StreamEvent:
        return self._emit(McpItemEvent.model_validate({"type": kind, "item_id": item.id or "", "output_index": index}))

    def _added(self, item: McpCall | McpListTools) -> tuple[int, StreamEvent]:
        index = len(self.response.output)
        self.response.output.append(item)
        shown = (
            item.model_copy(update={"status": "in_progress", "output": None, "error": None})
            if isinstance(item, McpCall)
            else item.model_copy(update={"tools": [], "error": None})
        )
        return index, self._emit(OutputItemEvent(type="response.output_item.added", output_index=index, item=shown))

    def _done(self, item: McpCall | McpListTools, index: int) -> StreamEvent:
        return self._emit(
            OutputItemEvent(type="response.output_item.done", output_index=index, item=self._snapshot(item))
        )

    def record_list_tools(self, item: McpListTools) -> list[StreamEvent]:
        """A listing already made (before the model ran): its whole event sequence at once."""
        index, added = self._added(item)
        outcome = "failed" if item.error else "completed"
        return [
            added,
            self._item_event("response.mcp_list_tools.in_progress", item, index),
            self._item_event(f"response.mcp_list_tools.{outcome}", item, index),
            self._done(item, index),
        ]

    def record_call(self, call: McpCall) -> list[StreamEvent]:
        """A call already made (an approved one, before the model ran): its whole event sequence."""
        index, added = self._added(call)
        events = [
            added,
            self._item_event("response.mcp_call.in_progress", call, index),
            self._emit(McpCallArgumentsDone(item_id=call.id or "", output_index=index, arguments=call.arguments)),
        ]
        return events + self._call_outcome(call, index)

    def call_finished(self, call: McpCall, output: str | None, error: dict[str, Any] | None) -> list[StreamEvent]:
        """A pending call was executed: its result ends the item."""
        index = self._calls_by_id.pop(call.id or "")
        call.output, call.error = output, error
        return self._call_outcome(call, index)

    def _call_outcome(self, call: McpCall, index: int) -> list[StreamEvent]:
        call.status = "failed" if call.error else "completed"
        return [self._item_event(f"response.mcp_call.{call.status}", call, index), self._done(call, index)]
