"""The shape shared by client tool kinds with fixed parameters (``shell``, ``local_shell``,
``apply_patch``, ``tool_search``): offered as one function named after the type; a call is filled
from its complete arguments (nothing streams); its items are read back as a function call whose
arguments are the item's fields, and a result."""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from responsa.protocol import FunctionCall, FunctionCallOutput, FunctionTool, Item, StreamEvent, Tool, ToolRef, new_id

from ._arguments import as_object
from ._kind import Closed, ItemEnd, Replay, Route, ToolPlan, Where

__all__ = ["FixedKind"]


@dataclass
class _Call:
    item: Any
    fill: Callable[[Any, dict[str, Any]], None]

    def opened(self, where: Where) -> Sequence[StreamEvent]:
        return ()

    def delta(self, chunk: str, where: Where) -> Sequence[StreamEvent]:
        return ()

    def close(self, arguments: str, status: ItemEnd, where: Where) -> Closed:
        self.fill(self.item, as_object(arguments))
        self.item.status = status
        return Closed(needs_client=True)


@dataclass(frozen=True)
class FixedKind:
    """One fixed-shape kind: what the model sees, and how its items are made and read back."""

    name: str
    id_prefix: str
    """Of its call items' ids (its outputs' add an ``o``)."""
    description: str
    parameters: dict[str, Any]
    new_item: Callable[[str, str], Item]
    """The empty call item, given its id and call id."""
    fill: Callable[[Any, dict[str, Any]], None]
    """Fill the call item from the model's arguments (a JSON object, read leniently)."""
    call_type: type[Any]
    call_arguments: Callable[[Any], Any]
    """What the model wrote, back from a call item."""
    output_type: type[Any]
    output_text: Callable[[Any], tuple[str, str]]
    """``(call_id, text)`` of an output item, as the model reads the result."""
    offered: Callable[[Tool, str], FunctionTool | None] | None = None
    """The function offered for a tool of this type, given the tool and where it is in the request
    (default: the type's name, description, parameters); None offers none, a 400 refuses it."""

    @property
    def tool_types(self) -> Sequence[str]:
        return (self.name,)

    @property
    def item_types(self) -> Mapping[str, str]:
        call_type, output_type = (model.model_fields["type"].default for model in (self.call_type, self.output_type))
        return {call_type: self.id_prefix, output_type: f"{self.id_prefix}o"}

    def offer(self, tool: Tool, tools: ToolPlan, param: str) -> None:
        default = FunctionTool(name=self.name, description=self.description, parameters=self.parameters)
        function = self.offered(tool, param) if self.offered is not None else default
        if function is not None:
            tools.add(function, Route(self.name, self.name), param)

    def open_call(self, route: Route, call_id: str) -> _Call:
        return _Call(self.new_item(new_id(self.id_prefix), call_id), self.fill)

    def chosen(self, ref: ToolRef, name: str, route: Route) -> bool:
        return ref.type == self.name

    def replay(self, item: Item, context: Replay) -> list[Item] | None:
        if isinstance(item, self.call_type):
            arguments = self.call_arguments(item)
            text = arguments if isinstance(arguments, str) else json.dumps(arguments)
            return [FunctionCall(id=item.id, call_id=item.call_id or item.id or "", name=self.name, arguments=text,
                                 status="completed")]  # fmt: skip
        if isinstance(item, self.output_type):
            call_id, output = self.output_text(item)
            return [FunctionCallOutput(id=item.id, call_id=call_id, output=output, status="completed")]
        return None
