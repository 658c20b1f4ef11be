"""A third-party tool kind, as a plug-in would ship it (the test installs it as a distribution with
a ``responsa.tool_kinds`` entry point): a tool ``{"type": "echo"}`` the client runs, whose calls are
``echo_call`` items (``text``) answered by ``echo_call_output`` items. It uses only the public seam."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from responsa.engine.tools import ClientRoute, ClientTools, Where
from responsa.protocol import FunctionCall, FunctionCallOutput, FunctionTool, Item, Tool, UnknownItem, new_id

_PARAMETERS = {"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]}


@dataclass
class _Call:
    item: UnknownItem

    def delta(self, chunk: str, where: Where) -> Sequence[Any]:
        return ()

    def close(self, arguments: str, where: Where) -> Sequence[Any]:
        try:
            self.item.text = str(json.loads(arguments).get("text", ""))  # type: ignore[attr-defined]
        except (ValueError, AttributeError):
            self.item.text = arguments  # type: ignore[attr-defined]
        return ()


class EchoKind:
    name = "echo"
    tool_types = ("echo",)
    item_types = ("echo_call", "echo_call_output")

    def offer(self, tool: Tool, tools: ClientTools, param: str) -> None:
        description = getattr(tool, "description", None) or "Echo a text back."
        tools.add(
            FunctionTool(name="echo", description=description, parameters=_PARAMETERS),
            ClientRoute("echo", "echo"),
            param,
        )

    def open_call(self, route: ClientRoute, call_id: str) -> _Call:
        return _Call(
            UnknownItem.model_validate({"type": "echo_call", "id": new_id("echo"), "call_id": call_id, "text": ""})
        )

    def replay(self, item: Item, tools: ClientTools) -> FunctionCall | FunctionCallOutput | None:
        fields = item.model_dump()
        if item.type == "echo_call":
            return FunctionCall(id=item.id, call_id=fields["call_id"], name="echo",
                                arguments=json.dumps({"text": fields.get("text", "")}), status="completed")  # fmt: skip
        return FunctionCallOutput(call_id=fields["call_id"], output=str(fields.get("output", "")), status="completed")


KIND = EchoKind()
