"""A third-party tool kind the server runs, as a plug-in would ship it (the test installs it with a
``responsa.tool_kinds`` entry point naming :func:`make_kind`): a tool ``{"type": "tally"}`` whose calls
the server answers from its own service, a :class:`Tally` made once at start-up and kept by the kind
(each call counts one more). Its calls are ``tally_call`` items (``label``, ``count``). It uses only the
public seam."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

from responsa.engine.tools import Closed, Recorded, Replay, Route, ServerContext, ToolPlan, ToolSetup, Where
from responsa.protocol import (
    FunctionCall,
    FunctionCallOutput,
    FunctionTool,
    Item,
    OutputItemEvent,
    Tool,
    ToolRef,
    UnknownItem,
    new_id,
)

_PARAMETERS = {"type": "object", "properties": {"label": {"type": "string"}}, "required": ["label"]}


class Tally:
    """The kind's service: a count kept for as long as the server runs."""

    def __init__(self) -> None:
        self.count = 0

    def bump(self) -> int:
        self.count += 1
        return self.count


@dataclass
class _Call:
    item: UnknownItem
    tally: Tally

    def opened(self, where: Where) -> Sequence[Any]:
        return ()

    def delta(self, chunk: str, where: Where) -> Sequence[Any]:
        return ()

    def close(self, arguments: str, status: str, where: Where) -> Closed:
        try:
            self.item.label = str(json.loads(arguments).get("label", ""))  # type: ignore[attr-defined]
        except (ValueError, AttributeError):
            self.item.label = arguments  # type: ignore[attr-defined]
        return Closed(run=self.run)

    async def run(self, context: ServerContext, where: Where) -> AsyncIterator[Sequence[Any]]:
        self.item.count = self.tally.bump()  # type: ignore[attr-defined]
        self.item.status = "completed"  # type: ignore[attr-defined]
        yield [OutputItemEvent(type="response.output_item.done", output_index=where["output_index"], item=self.item)]


class TallyKind:
    name = "tally"
    tool_types = ("tally",)
    item_types: ClassVar[Mapping[str, str]] = {"tally_call": "tly"}

    def __init__(self, tally: Tally) -> None:
        self._tally = tally

    def offer(self, tool: Tool, tools: ToolPlan, param: str) -> None:
        """Nothing here: the server offers it in :meth:`prepare`, with its service."""

    async def prepare(self, setup: ToolSetup) -> list[Recorded]:
        tool = next(tool for tool in setup.request.tools if tool.type == "tally")
        description = getattr(tool, "description", None) or "Count a tally."
        function = FunctionTool(name="tally", description=description, parameters=_PARAMETERS)
        setup.tools.add(function, Route("tally", "tally", target=self._tally), "tools")
        return []

    def open_call(self, route: Route, call_id: str) -> _Call:
        fields = {"type": "tally_call", "id": new_id("tly"), "call_id": call_id, "status": "in_progress"}
        return _Call(UnknownItem.model_validate(fields), route.target)

    def chosen(self, ref: ToolRef, name: str, route: Route) -> bool:
        return ref.type == "tally"

    def replay(self, item: Item, context: Replay) -> list[Item]:
        fields = item.model_dump()
        arguments = json.dumps({"label": fields.get("label", "")})
        return [
            FunctionCall(id=item.id, call_id=fields["call_id"], name="tally", arguments=arguments, status="completed"),
            FunctionCallOutput(call_id=fields["call_id"], output=f"count {fields.get('count')}", status="completed"),
        ]


def make_kind() -> TallyKind:
    """What the entry point names: the kind with the service it builds for itself."""
    return TallyKind(Tally())
