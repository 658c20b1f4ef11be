"""``tool_search``: the model searches for tools held back from it (``defer_loading: true`` on a
function, a namespace, a namespace's function or an MCP server).

Run by the server (``execution: "server"``, OpenAI's default): the deferred tools wait in the request's
plan (``ToolPlan.deferred``); the model is offered ``tool_search(query)``; its call is a
``tool_search_call`` the server answers with a ``tool_search_output`` listing the tools it loaded
(``_tool_catalog``), offered to the model from its next call on, and on later turns of the chain or
conversation. Run by the client (``execution: "client"``): the client answers each call; the tools
its ``tool_search_output`` returns are offered from then on (see ``plan_client_tools``)."""

from __future__ import annotations

from collections.abc import AsyncIterator, Mapping, Sequence
from dataclasses import dataclass
from functools import partial
from typing import Any, ClassVar

from responsa.protocol import FunctionTool, Item, StreamEvent, Tool, ToolRef, ToolSearchCall, ToolSearchOutput, new_id
from responsa.protocol import ToolSearchTool as SearchTool

from ._arguments import as_object
from ._fixed import FixedKind
from ._kind import Closed, ItemEnd, OpenCall, Replay, Route, ServerContext, ToolPlan, Where
from ._tool_catalog import LOADED, merged, ranked

__all__ = ["TOOL_SEARCH"]

_QUERY = {"type": "object", "properties": {"query": {"type": "string"}}}
_SERVER_SEARCH = FunctionTool(
    name="tool_search",
    description=(
        "Search for more tools you can use: describe the task in a few words. The best matching tools "
        f"(up to {LOADED}) become available to you from then on."
    ),
    parameters={
        "type": "object",
        "properties": {
            "query": {"type": "string", "maxLength": 200, "description": "What the tool does, in a few words."}
        },
        "required": ["query"],
    },
)


def _found(output: ToolSearchOutput) -> tuple[str, str]:
    found = [f"{tool.get('name') or tool.get('server_label') or tool.get('type')}: "
             f"{tool.get('description') or tool.get('server_description') or ''}" for tool in output.tools]  # fmt: skip
    if not found:
        return output.call_id or output.id or "", "No tools matched; try other words."
    return output.call_id or output.id or "", "Tools now available:\n" + "\n".join(found)


def _fill(item: ToolSearchCall, values: dict[str, Any]) -> None:
    item.arguments = values


_CLIENT = FixedKind(
    name="tool_search",
    id_prefix="tsc",
    description="",
    parameters=_QUERY,
    new_item=lambda item_id, call_id: ToolSearchCall(id=item_id, call_id=call_id, arguments={}, status="in_progress"),
    fill=_fill,
    call_type=ToolSearchCall,
    call_arguments=lambda item: item.arguments,
    output_type=ToolSearchOutput,
    output_text=_found,
    offered=lambda tool, param: (
        FunctionTool(name="tool_search", description=tool.description, parameters=tool.parameters or _QUERY)
        if isinstance(tool, SearchTool)
        else None
    ),
)


@dataclass
class _ServerSearch:
    """A search the server answers from the plan's deferred tools."""

    item: ToolSearchCall
    plan: ToolPlan

    def opened(self, where: Where) -> Sequence[StreamEvent]:
        return ()

    def delta(self, chunk: str, where: Where) -> Sequence[StreamEvent]:
        return ()

    def close(self, arguments: str, status: ItemEnd, where: Where) -> Closed:
        self.item.arguments = as_object(arguments)
        if status == "incomplete":
            self.item.status = "incomplete"
            return Closed()
        return Closed(run=partial(_search, self))


async def _search(call: _ServerSearch, context: ServerContext, where: Where) -> AsyncIterator[list[StreamEvent]]:
    """The call done, then its output: the tools loaded, offered from the next model call on."""
    call.item.status = "completed"
    yield [context.slots.close(call.item, where)]
    query = call.item.arguments.get("query") if isinstance(call.item.arguments, dict) else None
    waiting = {name: entry[0] for name, entry in call.plan.deferred.items()}
    names = ranked(waiting, query if isinstance(query, str) else "")
    context.timeline.mark("tool_search.loaded", item_id=call.item.id, tools=len(names))
    output = ToolSearchOutput(id=new_id("tsco"), call_id=call.item.call_id, execution="server",
                              tools=merged(call.plan.load(names)), status="completed")  # fmt: skip
    placed, added = context.slots.open(output)
    yield [added, context.slots.close(output, placed)]


class ToolSearchKind:
    """The client's searches as a fixed-shape kind; the server's from the request's plan."""

    name = "tool_search"
    tool_types = ("tool_search",)
    item_types: ClassVar[Mapping[str, str]] = _CLIENT.item_types

    def offer(self, tool: Tool, tools: ToolPlan, param: str) -> None:
        if isinstance(tool, SearchTool) and tool.execution != "client":
            tools.add(_SERVER_SEARCH, Route(self.name, self.name, target=tools), param)
        else:
            _CLIENT.offer(tool, tools, param)

    def open_call(self, route: Route, call_id: str) -> OpenCall:
        if isinstance(route.target, ToolPlan):
            item = ToolSearchCall(id=new_id("tsc"), call_id=call_id, arguments={}, execution="server",
                                  status="in_progress")  # fmt: skip
            return _ServerSearch(item, route.target)
        return _CLIENT.open_call(route, call_id)

    def chosen(self, ref: ToolRef, name: str, route: Route) -> bool:
        return ref.type == self.name

    def replay(self, item: Item, context: Replay) -> list[Item] | None:
        """Either search's call and output, as a function call and its result."""
        return _CLIENT.replay(item, context)


TOOL_SEARCH = ToolSearchKind()
