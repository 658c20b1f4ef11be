"""The calls the server runs for one response, as the output builder leaves them: those waiting to run
(in the order the model made them), those running (a cancel cuts them), and what they gave the answer
to cite. The builder records; the loop takes and runs them (``_server_calls.serve_calls``)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, get_args

from responsa.backends import TokenUsage
from responsa.protocol import Item, OutputItemEvent, StreamEvent

from ...output import Emitter
from ...tools import Annotations, ServerContext, ServerRun, Where

__all__ = ["ServerWork"]


class ServerWork:
    """One response's server-run calls, placed in its output by ``emitter``."""

    def __init__(self, emitter: Emitter) -> None:
        self._emitter = emitter
        self.features: Sequence[Any] = ()
        """The request's features, told of each item as it ends (as the builder tells them of the
        model's); the builder's own tuple (no reference back to the builder: no cycle to collect)."""
        self._waiting: list[tuple[ServerRun, Where]] = []
        """Calls the server runs, in the order the model made them, with where their items are."""
        self._unfinished: list[Where] = []
        """Calls the server is running or has yet to run in this round (a cancel cuts them)."""
        self.annotations = Annotations()
        """What the server's calls gave the answer to cite."""

    @property
    def waiting(self) -> int:
        """How many calls wait for the server."""
        return len(self._waiting)

    def wait(self, run: ServerRun, where: Where) -> None:
        """The call at ``where`` waits for the server to run it."""
        self._waiting.append((run, where))

    def take(self) -> list[tuple[ServerRun, Where]]:
        """The calls waiting for the server, in the order the model made them, for the loop to run;
        each is unfinished until :meth:`served` (a cancel cuts those that are not)."""
        waiting, self._waiting = self._waiting, []
        self._unfinished = [where for _, where in waiting]
        return waiting

    def context(self, span: Any = None, count: Callable[[TokenUsage], None] | None = None) -> ServerContext:
        """What the server's calls run with: this response, its timeline, what the answer will cite,
        and where what they spend on models is counted (``count``: the builder's)."""
        context = ServerContext(self._emitter.response, self._emitter.timeline, self.annotations, self, span)
        if count is not None:
            context.count = count
        return context

    def open(self, item: Item) -> tuple[Where, StreamEvent]:
        """An item a call makes as it runs, placed after the output so far (see ``OutputSlots``)."""
        where = self._emitter.place(item)
        self._unfinished.append(where)
        return where, self._emitter.item_added(item, where["output_index"])

    def close(self, item: Item, where: Where) -> StreamEvent:
        """A call's item, or one it made, ended: a cancel no longer cuts it."""
        self._finished(where)
        for feature in self.features:
            feature.item_done(item)
        return OutputItemEvent(type="response.output_item.done", output_index=where["output_index"],
                               item=self._emitter.snapshot(item))  # fmt: skip

    def served(self, where: Where) -> None:
        """The call at ``where`` has run to its end."""
        self._finished(where)

    def _finished(self, where: Where) -> None:
        if where in self._unfinished:
            self._unfinished.remove(where)

    def cut(self) -> list[StreamEvent]:
        """The server's calls a cancel stopped (or kept from starting) end ``incomplete`` (``failed``
        where their type has no such status), each with its ``output_item.done``."""
        cut = [*self._unfinished, *(where for _, where in self._waiting)]
        self._unfinished, self._waiting = [], []
        events: list[StreamEvent] = []
        output = self._emitter.response.output
        for where in cut:
            item = output[where["output_index"]]
            item.status = _cut_status(item)
            done = OutputItemEvent(type="response.output_item.done", output_index=where["output_index"],
                                   item=item.model_copy())  # fmt: skip
            events += self._emitter.emit_all([done])
        return events


def _cut_status(item: Item) -> str:
    field = type(item).model_fields.get("status")
    return "incomplete" if field is not None and "incomplete" in _literals(field.annotation) else "failed"


def _literals(annotation: Any) -> set[Any]:
    """The values a status annotation allows, through ``Optional`` and unions of literals."""
    found: set[Any] = set()
    for arg in get_args(annotation):
        found |= _literals(arg) if get_args(arg) else {arg}
    return found
