"""The shape the hosted tools the server runs share (file_search, web_search, image_generation): the
model calls a function with one string argument (a query, a prompt); the call item's progress events
are ``response.<item type>.<phase>``; once the argument is known, the server runs the call."""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from pydantic import TypeAdapter

from responsa.protocol import (
    CodeInterpreterCall,
    FileSearchCall,
    HostedToolEvent,
    ImageGenerationCall,
    Item,
    OutputItemEvent,
    StreamEvent,
    WebSearchCall,
    new_id,
)

from ..output import shown
from ._kind import Closed, ItemEnd, ServerContext, ServerRun, Where
from ._registry import ToolRegistry, hosted_phases

_items: TypeAdapter[Item] = TypeAdapter(Item)

__all__ = ["ArgumentCall", "hosted_end", "hosted_event", "reported_call"]


def hosted_event(item_type: str, phase: str, where: Where) -> StreamEvent:
    """``response.<item_type>.<phase>`` for the item at ``where``."""
    return HostedToolEvent.model_validate({"type": f"response.{item_type}.{phase}", **where})


def reported_call(kinds: ToolRegistry, item_type: str, fields: Mapping[str, Any]) -> tuple[Item, list[str]]:
    """A hosted call a backend says it ran itself (the simulator's): its item, with an id of its
    kind's prefix, and the phases of its progress events, as its kind names them."""
    kind = kinds.for_item(item_type)
    progress = getattr(kind, "progress", None)
    if kind is None or progress is None:
        raise ValueError(f"no hosted tool kind owns {item_type!r} items")
    item = _items.validate_python({"type": item_type, "id": new_id(kind.item_types[item_type]), **fields})
    return item, list(hosted_phases(progress))


HostedCallItem = FileSearchCall | WebSearchCall | ImageGenerationCall | CodeInterpreterCall
"""The call items of the hosted kinds the server runs (a backend's own reported call is ``backends.HostedCall``)."""


def hosted_end(item: HostedCallItem, context: ServerContext, where: Where) -> list[StreamEvent]:
    """A server-run call's last events: ``completed`` (unless it failed), then its item as the create
    shows it (the optional data its ``include`` did not ask for left out)."""
    done = OutputItemEvent(type="response.output_item.done", output_index=where["output_index"],
                           item=shown(item, context.response.shown_includes).model_copy())  # fmt: skip
    return [hosted_event(item.type, "completed", where), done] if item.status == "completed" else [done]


def argument_of(arguments: str, name: str) -> str:
    """The string argument ``name`` of the model's JSON arguments (the arguments as written, if unreadable)."""
    try:
        return str(json.loads(arguments).get(name) or "")
    except (ValueError, AttributeError):
        return arguments


@dataclass
class ArgumentCall:
    """A call of a server-run hosted tool as the model writes it: ``in_progress`` once opened; when
    complete, ``run(argument)`` is what the server runs; cut short by the token limit, ``cut()`` marks
    the item and nothing runs."""

    item: Item
    argument: str
    run: Callable[[str], ServerRun]
    cut: Callable[[], None]

    def opened(self, where: Where) -> Sequence[StreamEvent]:
        return [hosted_event(self.item.type, "in_progress", where)]

    def delta(self, chunk: str, where: Where) -> Sequence[StreamEvent]:
        return ()

    def close(self, arguments: str, status: ItemEnd, where: Where) -> Closed:
        if status == "incomplete":
            self.cut()
            return Closed()
        return Closed(run=self.run(argument_of(arguments, self.argument)))
