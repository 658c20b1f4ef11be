"""A request's client tools through their kinds: what the model is offered, the item a call opens,
and the context as the model reads it."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from pydantic import TypeAdapter, ValidationError

from responsa.protocol import Item, Tool, ToolSearchOutput

from ._kind import ClientRoute, ClientTools, OpenCall
from ._registry import kind_for_item, kind_for_tool, kind_named

__all__ = ["client_items", "open_call", "plan_client_tools"]

_tools_adapter: TypeAdapter[list[Tool]] = TypeAdapter(list[Tool])


def plan_client_tools(tools: Sequence[Tool], context: Iterable[Item] = ()) -> ClientTools:
    """The client-run tools of a request, plus those a ``tool_search_output`` in the context made
    available; 400 for duplicate names."""
    found: list[Tool] = []
    for item in context:
        if isinstance(item, ToolSearchOutput):
            try:
                found += _tools_adapter.validate_python(item.tools)
            except ValidationError:
                continue  # what the client's search returned is its business; skip what we cannot read
    plan = ClientTools()
    for index, tool in enumerate([*tools, *found]):
        kind = kind_for_tool(tool.type)
        if kind is not None:
            kind.offer(tool, plan, f"tools[{index}]")
    return plan


def open_call(route: ClientRoute, call_id: str) -> OpenCall:
    """The call a model's call of a client tool opens (its item, and how its arguments stream in)."""
    return kind_named(route.kind).open_call(route, call_id)


def client_items(items: Sequence[Item], plan: ClientTools) -> list[Item]:
    """The context as the model reads it: every client tool call as a function call with its result."""
    seen: list[Item] = []
    for item in items:
        kind = kind_for_item(item.type)
        replayed = kind.replay(item, plan) if kind is not None else None
        seen.append(replayed if replayed is not None else item)
    return seen
