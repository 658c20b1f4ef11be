"""``function`` tools, alone or in a ``namespace`` (offered as ``<namespace>__<name>``): the model's own
way of calling, so a call streams its JSON arguments as they come."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

from responsa.protocol import (
    CustomTool,
    FunctionCall,
    FunctionCallArgumentsDelta,
    FunctionCallArgumentsDone,
    FunctionCallOutput,
    FunctionTool,
    Item,
    NamespaceTool,
    StreamEvent,
    Tool,
    ToolRef,
    item_text,
    new_id,
)

from . import custom
from ._async_calls import acknowledged, answer_read_late, asks_async, is_async, read_with_acknowledgement
from ._kind import Closed, ItemEnd, Replay, Route, ToolPlan, Where, chosen_by_name
from ._schema import check_schema

__all__ = ["KIND"]


@dataclass
class _Call:
    item: FunctionCall

    def opened(self, where: Where) -> Sequence[StreamEvent]:
        return ()

    def delta(self, chunk: str, where: Where) -> Sequence[StreamEvent]:
        return [FunctionCallArgumentsDelta.of_call(where["item_id"], where["output_index"], chunk, self.item.call_id)]

    def close(self, arguments: str, status: ItemEnd, where: Where) -> Closed:
        self.item.arguments, self.item.status = arguments, status
        done = FunctionCallArgumentsDone(name=self.item.name, arguments=arguments, **where)
        if is_async(self.item):  # the client runs it; the model goes on
            return Closed([done], run=acknowledged(self.item))
        return Closed([done], needs_client=True)


class FunctionKind:
    name = "function"
    tool_types = ("function", "namespace")
    item_types: ClassVar[Mapping[str, str]] = {"function_call": "fc", "function_call_output": "fco"}
    answers: ClassVar[Mapping[type[Item], type[Item]]] = {FunctionCallOutput: FunctionCall}
    """An output in a request's context must answer a call of it, by ``call_id`` (as OpenAI checks)."""

    def offer(self, tool: Tool, tools: ToolPlan, param: str) -> None:
        """Each function (a namespace's as ``<namespace>__<name>``); one marked ``defer_loading`` (or in a
        namespace so marked) with the definition a tool search loads it by."""
        if isinstance(tool, NamespaceTool):
            whole = _defers(tool)
            for index, inner in enumerate(tool.tools):
                loadable = _loadable(inner, tool) if whole or _defers(inner) else None
                offer_named(inner, tools, tool.name, f"{param}.tools[{index}]", loadable)
        elif isinstance(tool, FunctionTool):
            offer_named(tool, tools, None, param, _loadable(tool) if _defers(tool) else None)

    def transcribe(self, item: Item) -> str | None:
        """Its items' lines in a compaction's transcript."""
        if isinstance(item, FunctionCall):
            return f"tool call {item.name}({item.arguments})"
        return f"tool result: {item_text(item)}" if isinstance(item, FunctionCallOutput) else None

    def open_call(self, route: Route, call_id: str) -> _Call:
        marks = {"async": True} if route.asynchronous else {}
        return _Call(FunctionCall(id=new_id("fc"), call_id=call_id, name=route.name, arguments="",
                                  namespace=route.namespace, status="in_progress", **marks))  # fmt: skip

    def chosen(self, ref: ToolRef, name: str, route: Route) -> bool:
        return chosen_by_name(ref, name, route)

    def replay(self, item: Item, context: Replay) -> list[Item] | None:
        if isinstance(item, FunctionCallOutput):
            return answer_read_late(item, context)
        if not isinstance(item, FunctionCall):
            return None
        call = item
        if item.namespace is not None:
            name = context.tools.model_name(item.name, item.namespace)
            call = FunctionCall(id=item.id, call_id=item.call_id or item.id or "", name=name, arguments=item.arguments,
                                status="completed")  # fmt: skip
        if is_async(item):
            return read_with_acknowledgement(call)
        return None if call is item else [call]  # a plain function call is read as it is


def offer_named(
    tool: FunctionTool | CustomTool,
    tools: ToolPlan,
    namespace: str | None,
    param: str,
    deferred: dict[str, Any] | None = None,
) -> None:
    """A function or custom tool, in ``namespace`` when it is in one; 400 for parameters that are no
    JSON Schema. ``deferred``: its definition, where a tool search may hold it back (a custom tool is
    offered at once)."""
    if isinstance(tool, CustomTool):
        custom.offer_named(tool, tools, namespace, param)
        return
    if tool.parameters is not None:
        check_schema(tool.parameters, f"{param}.parameters")
    name = tools.model_name(tool.name, namespace)
    function = tool if namespace is None else tool.model_copy(update={"name": name})
    if deferred is not None and namespace is None and tools.defers:
        namespace = tool.name  # a deferred top-level function is called in a namespace of its own name, as at OpenAI
    route = Route("function", tool.name, namespace, asynchronous=asks_async(tool, param))
    tools.add(function, route, param, deferred)


def _defers(tool: FunctionTool | CustomTool | NamespaceTool) -> bool:
    return (tool.model_extra or {}).get("defer_loading") is True


def _loadable(tool: FunctionTool | CustomTool, namespace: NamespaceTool | None = None) -> dict[str, Any]:
    """``tool`` as a ``tool_search_output`` lists it once loaded (a namespace's in its namespace)."""
    definition = tool.model_dump(mode="json", exclude_none=True)
    definition.pop("defer_loading", None)
    if namespace is None:
        return definition
    return {"type": "namespace", "name": namespace.name, "description": namespace.description or "",
            "tools": [definition]}  # fmt: skip


KIND = FunctionKind()
