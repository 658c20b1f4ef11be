"""The part of building a response every kind of output shares: numbering events and snapshotting."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any, Protocol, TypeVar

import orjson
from pydantic import BaseModel

from responsa.protocol import (
    Item,
    LifecycleEvent,
    LifecycleType,
    OutputItemEvent,
    ResponseObject,
    StreamEvent,
    dump_json,
    event_json,
)

from ._includes import create_view
from ._timeline import Timeline

__all__ = ["Emitter", "ItemWatcher", "Where"]

Where = dict[str, Any]
"""Where an item is in the output: its ``item_id`` and ``output_index``, as its events carry them."""

ItemT = TypeVar("ItemT", bound=BaseModel)


class ItemWatcher(Protocol):
    """What marks every item of a response from its first event on (a request feature's run)."""

    def item_opened(self, item: Item) -> None:
        """``item`` takes its place in the output (told again, the same, for a message made ahead)."""
        ...


class Emitter:
    """Owns the response being built and numbers every event it emits from 0 without gaps."""

    def __init__(self, response: ResponseObject, timeline: Timeline | None = None) -> None:
        self.response = response
        self.read = True
        """Whether anyone reads the events: not so for a create answered in JSON, whose events are never
        sent. Unread, the events that every response has (lifecycle, a message's) are not made at all
        (8% of a JSON request's instructions), and items are not copied for the others."""
        self._sequence = 0
        self._ahead: dict[int, tuple[StreamEvent, int, bytes]] = {}
        """Events encoded before they were emitted (see :meth:`encode_ahead`): by id, with their number and
        JSON; each is held here too, so that no other event can take its id meanwhile."""
        self.timeline = timeline or Timeline()
        """When each output item started and ended (and what else the run marks)."""
        self.watchers: Sequence[ItemWatcher] = ()
        """Told of each item as it is placed, before its ``output_item.added`` is made."""

    def emit(self, event: StreamEvent) -> StreamEvent:
        # Straight into the event's fields: pydantic's __setattr__ (a Python hook) cost a third of
        # what building a token's delta does, once per event.
        event.__dict__["sequence_number"] = self._sequence
        self._sequence += 1
        if type(event) is OutputItemEvent:
            self.timeline.item(event)
        return event

    def encode_ahead(self, events: list[StreamEvent]) -> None:
        """Number ``events`` as the next ones and encode them now, while the model thinks, so that the
        first token does not wait for it (see :meth:`event_json`). Should other events come first,
        these are numbered and encoded again when emitted."""
        self._ahead = {}
        for offset, event in enumerate(events):
            event.sequence_number = self._sequence + offset
            self._ahead[id(event)] = (event, event.sequence_number, event_json(event))

    def event_json(self, event: StreamEvent) -> bytes:
        """``event`` as JSON: as encoded ahead, when it was and still has the number it was encoded with."""
        ahead = self._ahead.pop(id(event), None) if self._ahead else None
        if ahead is not None and ahead[1] == event.sequence_number:
            return ahead[2]
        return event_json(event)

    def encode_end(self, event: StreamEvent, saved: dict[str, Any]) -> None:
        """Encode ``event``, the response's terminal event, with the response's JSON form as the store
        saved it (the same state), so that the response is not dumped again for its last event; unless
        its create hides some of that (optional data ``include`` did not ask for)."""
        hidden = create_view(self.response) is not self.response
        if type(event) is LifecycleEvent and not hidden and not event.__pydantic_extra__:
            self._encode_around(event, orjson.dumps(saved))

    def _encode_around(self, event: StreamEvent, response_json: bytes) -> None:
        """Encode ``event``, a lifecycle event (no extra fields), around its response's JSON: the JSON
        pydantic would write for it (test_sse_encoding checks it), without dumping the response again."""
        head = b'{"sequence_number":%d,"type":"%s","response":' % (event.sequence_number, event.type.encode())
        self._ahead[id(event)] = (event, event.sequence_number, head + response_json + b"}")

    def emit_all(self, events: Iterable[StreamEvent]) -> list[StreamEvent]:
        return [self.emit(event) for event in events]

    def opening(self, item: Item) -> None:
        """Tell the watchers ``item`` takes its place, before any event of it is made (:meth:`place` does;
        a message made ahead of its place is told as its events are made, and again as it is placed)."""
        for watcher in self.watchers:
            watcher.item_opened(item)

    def place(self, item: Item) -> Where:
        """``item`` appended to the output; where it is."""
        self.opening(item)
        self.response.output.append(item)
        return {"item_id": getattr(item, "id", None) or "", "output_index": len(self.response.output) - 1}

    def added(self, item: Item) -> tuple[Where, StreamEvent]:
        """``item`` appended to the output: where it is, and its ``output_item.added``."""
        where = self.place(item)
        return where, self.emit(self.item_added(item, where["output_index"]))

    def item_added(self, item: Item, output_index: int) -> OutputItemEvent:
        """The ``output_item.added`` of ``item`` at ``output_index``, not yet numbered (an item built
        ahead of its place is emitted later)."""
        return OutputItemEvent(type="response.output_item.added", output_index=output_index, item=self.snapshot(item))

    def done(self, item: Item, where: Where) -> StreamEvent:
        index = where["output_index"]
        return self.emit(
            OutputItemEvent(type="response.output_item.done", output_index=index, item=self.snapshot(item))
        )

    def snapshot(self, item: ItemT) -> ItemT:
        """The item as it is now, for an event (the item itself changes later); itself when no one reads events.

        A shallow copy is enough: the builder only ever reassigns an item's fields (``status``,
        ``content``, ``arguments``...), never changes what they hold in place."""
        return item.model_copy() if self.read else item

    def lifecycle(self, *kinds: LifecycleType) -> list[StreamEvent]:
        """The response's ``kinds`` events, in a row, of the response as it is now (none where no one
        reads the events). Several share one copy of the response, and its JSON: a stream opens with
        ``response.created`` and ``response.in_progress`` of the same response."""
        if not self.read:
            return []
        # Only the output list and its items change later: copy those, share the rest.
        output = [item.model_copy() for item in self.response.output]
        response = create_view(self.response.model_copy(update={"output": output}))
        events = [self.emit(LifecycleEvent(type=kind, response=response)) for kind in kinds]
        if len(events) > 1:
            shared = dump_json(response)
            for event in events:
                self._encode_around(event, shared)
        return events
