"""``custom`` tools: free-form text input (a patch, a query), offered as a function taking one string
``input``; the call streams the input's text, decoded out of the JSON arguments as they come."""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import ClassVar

from responsa.protocol import (
    CustomTool,
    CustomToolCall,
    CustomToolCallInputDelta,
    CustomToolCallInputDone,
    CustomToolCallOutput,
    FunctionCall,
    FunctionCallOutput,
    FunctionTool,
    InvalidRequest,
    Item,
    StreamEvent,
    Tool,
    ToolRef,
    item_text,
    new_id,
)

from ._arguments import as_object
from ._async_calls import acknowledged, answer_read_late, asks_async, is_async, read_with_acknowledgement
from ._kind import Closed, ItemEnd, Replay, Route, ToolPlan, Where, chosen_by_name

__all__ = ["KIND", "InputDecoder", "offer_named"]

_INPUT_SCHEMA = {
    "type": "object",
    "properties": {"input": {"type": "string", "description": "The tool's input, written as its format says."}},
    "required": ["input"],
    "additionalProperties": False,
}


@dataclass
class _Call:
    item: CustomToolCall
    decoder: InputDecoder = field(default_factory=lambda: InputDecoder())

    def opened(self, where: Where) -> Sequence[StreamEvent]:
        return ()

    def delta(self, chunk: str, where: Where) -> Sequence[StreamEvent]:
        text = self.decoder.feed(chunk)
        return [CustomToolCallInputDelta.of_token(where["item_id"], where["output_index"], text)] if text else []

    def close(self, arguments: str, status: ItemEnd, where: Where) -> Closed:
        self.item.input, self.item.status = InputDecoder.final(arguments), status
        done = CustomToolCallInputDone(input=self.item.input, **where)
        if is_async(self.item):  # the client runs it; the model goes on
            return Closed([done], run=acknowledged(self.item))
        return Closed([done], needs_client=True)


class CustomKind:
    name = "custom"
    tool_types = ("custom",)
    item_types: ClassVar[Mapping[str, str]] = {"custom_tool_call": "ctc", "custom_tool_call_output": "ctco"}

    def offer(self, tool: Tool, tools: ToolPlan, param: str) -> None:
        if isinstance(tool, CustomTool):
            offer_named(tool, tools, None, param)

    def open_call(self, route: Route, call_id: str) -> _Call:
        marks = {"async": True} if route.asynchronous else {}
        return _Call(CustomToolCall(id=new_id("ctc"), call_id=call_id, name=route.name, input="",
                                    namespace=route.namespace, **marks))  # fmt: skip

    def chosen(self, ref: ToolRef, name: str, route: Route) -> bool:
        return chosen_by_name(ref, name, route)

    def transcribe(self, item: Item) -> str | None:
        """An output's line in a compaction's transcript (a call's is the plain one)."""
        return f"tool result: {item_text(item)}" if isinstance(item, CustomToolCallOutput) else None

    def replay(self, item: Item, context: Replay) -> list[Item] | None:
        if isinstance(item, CustomToolCall):
            name = context.tools.model_name(item.name, item.namespace)
            call = FunctionCall(id=item.id, call_id=item.call_id or item.id or "", name=name,
                                arguments=json.dumps({"input": item.input}), status="completed")  # fmt: skip
            return read_with_acknowledgement(call) if is_async(item) else [call]
        if isinstance(item, CustomToolCallOutput):
            late = answer_read_late(item, context)
            if late is not None:
                return late
            return [FunctionCallOutput(id=item.id, call_id=item.call_id, output=item_text(item), status="completed")]
        return None


def offer_named(tool: CustomTool, tools: ToolPlan, namespace: str | None, param: str) -> None:
    """A custom tool, in ``namespace`` when it is in one; 400 for a grammar format without its grammar."""
    fmt = tool.format
    if fmt is not None and fmt.type == "grammar" and not (fmt.syntax and fmt.definition):
        raise InvalidRequest(
            "A grammar format needs 'syntax' ('lark' or 'regex') and 'definition'.", param=f"{param}.format"
        )
    name = tools.model_name(tool.name, namespace)
    function = FunctionTool(name=name, description=_description(tool), parameters=_INPUT_SCHEMA)
    tools.add(function, Route("custom", tool.name, namespace, custom=tool, asynchronous=asks_async(tool, param)), param)


def _description(tool: CustomTool) -> str:
    text = tool.description or ""
    fmt = tool.format
    if fmt is not None and fmt.type == "grammar" and fmt.definition:
        text += f"\n\nThe input must match this {fmt.syntax} grammar:\n{fmt.definition}"
    return text.strip()


_UNICODE_TAIL = re.compile(r"\\u[0-9a-fA-F]{0,3}$")


def _complete_escapes(body: str) -> str:
    """``body`` without a trailing escape sequence that has not fully arrived."""
    if (len(body) - len(body.rstrip("\\"))) % 2:
        return body[:-1]
    tail = _UNICODE_TAIL.search(body)
    if tail is not None and (tail.start() - len(body[: tail.start()].rstrip("\\"))) % 2 == 0:
        return body[: tail.start()]
    return body


class InputDecoder:
    """The text of a custom tool's ``input`` while its JSON arguments (``{"input": "..."}``) stream in,
    so ``response.custom_tool_call_input.delta`` events carry text, not JSON (the code interpreter's
    ``code`` streams the same way: ``argument`` names the string)."""

    def __init__(self, argument: str = "input") -> None:
        self._raw = ""
        self._sent = 0
        self._start = re.compile(rf'"{re.escape(argument)}"\s*:\s*"')

    def feed(self, chunk: str) -> str:
        """The input text this chunk adds ('' while inside an escape or before the value starts)."""
        self._raw += chunk
        text = self._decoded()
        if len(text) <= self._sent:
            return ""
        delta, self._sent = text[self._sent :], len(text)
        return delta

    def _decoded(self) -> str:
        match = self._start.search(self._raw)
        if match is None:
            return ""
        body = self._raw[match.end() :]
        end = re.search(r'(?<!\\)(?:\\\\)*"', body)
        if end is not None:
            body = body[: end.end() - 1]
        else:
            body = _complete_escapes(body)
        try:
            return str(json.loads(f'"{body}"'))
        except json.JSONDecodeError:
            return ""

    @staticmethod
    def final(arguments: str, argument: str = "input") -> str:
        """The whole input: the ``argument`` string, else the arguments as the model wrote them."""
        value = as_object(arguments).get(argument)
        return value if isinstance(value, str) else arguments


KIND = CustomKind()
