"""A third-party tool kind, as a plug-in would ship it (the test installs it as a distribution with
a ``responsa.tool_kinds`` entry point): a tool ``{"type": "echo"}`` the client runs, whose calls are
``echo_call`` items (``text``) answered by ``echo_call_output`` items. It uses only the public seam."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

from responsa.engine.tools import Closed, Replay, Route, ToolPlan, Where
from responsa.protocol import FunctionCall, FunctionCallOutput, FunctionTool, Item, Tool, ToolRef, UnknownItem, new_id

_PARAMETERS = {"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]}


@dataclass
class _Call:
    item: UnknownItem

    def opened(self, where: Where) -> Sequence[Any]:
        return ()

    def delta(self, chunk: str, where: Where) -> Sequence[Any]:
        return ()

    def close(self, arguments: str, status: str, where: Where) -> Closed:
        try:
            self.item.text = str(json.loads(arguments).get("text", ""))  # type: ignore[attr-defined]
        except (ValueError, AttributeError):
            self.item.text = arguments  # type: ignore[attr-defined]
        self.item.status = status  # type: ignore[attr-defined]
        return Closed(needs_client=True)  # the client runs it: the response ends here


class EchoKind:
    name = "echo"
    tool_types = ("echo",)
    item_types: ClassVar[Mapping[str, str]] = {"echo_call": "echo", "echo_call_output": "echoo"}

    def offer(self, tool: Tool, tools: ToolPlan, param: str) -> None:
        description = getattr(tool, "description", None) or "Echo a text back."
        tools.add(
            FunctionTool(name="echo", description=description, parameters=_PARAMETERS),
            Route("echo", "echo"),
            param,
        )

    def open_call(self, route: Route, call_id: str) -> _Call:
        return _Call(
            UnknownItem.model_validate({"type": "echo_call", "id": new_id("echo"), "call_id": call_id, "text": ""})
        )

    def chosen(self, ref: ToolRef, name: str, route: Route) -> bool:
        return ref.type == "echo"

    def replay(self, item: Item, context: Replay) -> list[Item]:
        fields = item.model_dump()
        if item.type == "echo_call":
            return [FunctionCall(id=item.id, call_id=fields["call_id"], name="echo",
                                 arguments=json.dumps({"text": fields.get("text", "")}), status="completed")]  # fmt: skip
        return [FunctionCallOutput(call_id=fields["call_id"], output=str(fields.get("output", "")), status="completed")]


KIND = EchoKind()
