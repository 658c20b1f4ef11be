"""A request's tools through their kinds: what the model is offered, the item a call opens, and the
context as the model reads it."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from pydantic import TypeAdapter, ValidationError

from responsa.protocol import (
    LONG_CONTEXT,
    AdditionalTools,
    Item,
    KeptContexts,
    Message,
    Reasoning,
    Tool,
    ToolSearchOutput,
    ToolSearchTool,
    made_by_another_agent,
)

from ._kind import OpenCall, Recorded, Replay, Route, ToolPlan, ToolSetup
from ._registry import ToolRegistry
from ._tool_catalog import loaded_names

__all__ = ["Replays", "open_call", "plan_client_tools", "prepare_server_tools"]

_tools_adapter: TypeAdapter[list[Tool]] = TypeAdapter(list[Tool])


def plan_client_tools(
    kinds: ToolRegistry,
    tools: Sequence[Tool],
    context: Sequence[Item] = (),
    classes: frozenset[type] | None = None,
    input_start: int = 0,
) -> ToolPlan:
    """The tools of a request that need no server service to offer (the client-run ones), plus those a
    ``tool_search_output`` or an ``additional_tools`` item in the context made available (a server-run
    search's output loads the deferred tools it names); 400 for
    duplicate names. ``classes``: those of the context's items, where the caller has them (a scan of
    the whole context saved). ``input_start``: where the request's input starts in ``context``, so
    that a 400 on an ``additional_tools`` item names ``input[i].tools[j]``."""
    in_context = frozenset(map(type, context)) if classes is None else classes
    found: list[Tool] = []
    loaded: set[str] = set()
    if ToolSearchOutput in in_context:
        for item in context:
            if isinstance(item, ToolSearchOutput) and item.execution == "server":  # the server's: held back here
                loaded |= loaded_names(item.tools)
            elif isinstance(item, ToolSearchOutput):
                try:
                    found += _tools_adapter.validate_python(item.tools)
                except ValidationError:
                    continue  # what the client's search returned is its business; skip what we cannot read
    offered = [(tool, f"tools[{index}]") for index, tool in enumerate([*tools, *found])]
    if AdditionalTools in in_context:
        offered = with_additional(offered, _added(context, input_start))
    defers = any(isinstance(tool, ToolSearchTool) and tool.execution != "client" for tool in tools)
    plan = ToolPlan(kinds, defers=defers, loaded=frozenset(loaded))
    for tool, param in offered:
        kind = kinds.for_tool(tool.type)
        if kind is not None:
            kind.offer(tool, plan, param)
    return plan


Placed = tuple[Tool, str]
"""A tool and where the request gave it (the ``param`` a 400 on it names)."""


def with_additional(tools: Sequence[Placed], additional: Sequence[Placed]) -> list[Placed]:
    """``tools`` and then each tool ``additional_tools`` items added, in the context's order; a tool
    given again (its type and name: Codex's Responses Lite resends its tools) replaces the earlier
    definition where it stood."""
    merged = list(tools)
    where = {_identity(tool): index for index, (tool, _) in enumerate(merged)}
    for placed in additional:
        key = _identity(placed[0])
        if key in where:
            merged[where[key]] = placed
        else:
            where[key] = len(merged)
            merged.append(placed)
    return merged


def _added(context: Sequence[Item], input_start: int) -> list[Placed]:
    """The tools of the context's ``additional_tools`` items, in order, each placed in the input (an
    earlier turn's, already checked when it was sent, under ``previous_response_id``)."""
    added: list[Placed] = []
    for position, item in enumerate(context):
        if isinstance(item, AdditionalTools):
            where = f"input[{position - input_start}]" if position >= input_start else "previous_response_id"
            added += [(tool, f"{where}.tools[{number}]") for number, tool in enumerate(item.tools)]
    return added


def _identity(tool: Tool) -> tuple[str, str | None]:
    return tool.type, getattr(tool, "name", None) or getattr(tool, "server_label", None)


async def prepare_server_tools(setup: ToolSetup) -> list[Recorded]:
    """The tools of the server-run kinds the request names (by a tool, or by an item of theirs in its
    input: an approval) added to ``setup.tools``; the items they made before the model ran."""
    named = [tool.type for tool in setup.request.tools] + [item.type for item in setup.input_items]
    recorded: list[Recorded] = []
    for kind in setup.tools.kinds.server_kinds(named):
        recorded += await kind.prepare(setup)
    return recorded


def open_call(plan: ToolPlan, route: Route, call_id: str) -> OpenCall:
    """The call a model's call of a tool opens (its item, and how its arguments stream in)."""
    return plan.kinds.named(route.kind).open_call(route, call_id)


class Replays:
    """Contexts as the model reads them (every tool's call and output as a function call and its
    result), and what the contexts read lately were replayed into, kept for their next turn: a turn
    replays only the items its context adds to a kept one's (the same objects, see ``KeptContexts``).
    An item's replay reads the items before it (an approval's request, an asynchronous call), so what
    was made of a kept start stays true; an item still being built (``in_progress``) and those after
    it are not kept."""

    def __init__(self) -> None:
        self._kept = KeptContexts[_Replayed]()

    def replayed(self, items: Sequence[Item], plan: ToolPlan, classes: frozenset[type]) -> list[Item]:
        """``items`` as the model reads them. A context of messages and reasoning only (no tool kind's
        items) is read as it is, found from ``classes``, those of its items (or more): this runs over a
        whole history every turn (see docs/performance.md)."""
        kinds = plan.kinds.items
        if _UNTOOLED.issuperset(classes) and kinds.keys().isdisjoint(_UNTOOLED_TYPES):
            return list(items)
        seen: list[Item] = []
        ends: list[int] = []  # how many items ``seen`` holds after each item's replay
        long = len(items) >= LONG_CONTEXT
        known_calls: list[tuple[int, Item]] = []
        found = self._kept.find(items) if long else None
        if found is not None and found[2] > 0:
            _start, kept, same = found
            seen, ends = kept.seen[: kept.ends[same - 1]], kept.ends[:same]
            known_calls = [call for call in kept.calls if call[0] < same]
        context = Replay(plan, items, known_calls, len(ends))
        settled = len(items)
        for index in range(len(ends), len(items)):
            item = items[index]
            if settled == len(items) and getattr(item, "status", None) == "in_progress":
                settled = index
            if made_by_another_agent(item):  # a subagent's, in a multi-agent response: not this model's
                ends.append(len(seen))
                continue
            kind = kinds.get(item.type)
            replay = kind.replay(item, context) if kind is not None else None
            if replay is None:
                seen.append(item)
            else:
                seen += replay
            ends.append(len(seen))
        if long and settled:
            calls = [call for call in context.asynchronous_places if call[0] < settled]
            start = list(items) if settled == len(items) else list(items[:settled])
            self._kept.keep(start, _Replayed(seen[: ends[settled - 1]], ends[:settled], calls))
        return seen


@dataclass(frozen=True, slots=True)
class _Replayed:
    """A context's start as the model reads it, where each item's replay ends in it, and its
    asynchronous calls with their places (``Replay.asynchronous_places``)."""

    seen: list[Item]
    ends: list[int]
    calls: list[tuple[int, Item]]


_UNTOOLED: frozenset[type] = frozenset((Message, Reasoning))
_UNTOOLED_TYPES = ("message", "reasoning")
"""Items no built-in tool kind reads back (one a plugin registers could claim their types)."""
