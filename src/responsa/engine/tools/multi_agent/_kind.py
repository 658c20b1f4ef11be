"""``multi_agent``: the calls the root agent of a hosted multi-agent response makes to run subagents,
run by the server (OpenAI's ``multi_agent_call`` items and their ``multi_agent_call_output``).

The request's ``multi_agent: {"enabled": true}`` (the feature, ``responses/features/_multi_agent``)
offers the root's model six functions, named after the actions of openai's beta types, with the
arguments Codex's multi-agent tools take: ``spawn_agent`` (``task_name``, ``message``),
``send_message`` and ``followup_task`` (``target``, ``message``: each also an ``agent_message`` item),
``wait_agent`` (``targets``, ``timeout_ms``), ``interrupt_agent`` (``target``), ``list_agents``
(``path_prefix``). Each call is answered with JSON text. While a call of the root's runs (a wait above
all), what the subagents made since the last one is shown in the output, attributed to them. A
subagent has the same calls, for subagents of its own."""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import AsyncIterator, Mapping, Sequence
from dataclasses import dataclass
from functools import partial
from typing import Any, ClassVar

from responsa.protocol import (
    FunctionCall,
    FunctionCallOutput,
    FunctionTool,
    InvalidRequest,
    Item,
    StreamEvent,
    Tool,
    ToolRef,
    UnknownItem,
    new_id,
)

from .._arguments import as_object
from .._kind import Closed, ItemEnd, Recorded, Replay, Route, ServerContext, ToolPlan, ToolSetup, Where
from ._room import ROOT, Room, Rooms
from ._team import Team

__all__ = ["MULTI_AGENT_FIELD", "MULTI_AGENT_TOOL", "MultiAgentKind"]

MULTI_AGENT_TOOL = "multi_agent"
"""The tool type the feature adds to a multi-agent request (the server's own: not on OpenAI's wire)."""
MULTI_AGENT_FIELD = "multi_agent"
"""The request field that asks for subagents (``{"enabled": true}``)."""
WAIT_MS = 30_000
"""How long ``wait_agent`` waits when the call gives no ``timeout_ms`` (Codex's own wait's default)."""
MAX_WAIT_MS = 3_600_000
"""How long ``wait_agent`` waits at most, whatever the call asks (an hour, as Codex's own wait)."""

_TARGET = {"type": "string", "description": "The subagent: its name (/root/<task_name>) or task name."}
_MESSAGE = {"type": "string", "description": "What to tell it."}
FUNCTIONS = (
    FunctionTool(name="spawn_agent", description=(
        "Start a subagent on a task of its own: it works with your tools, side by side with you and other "
        "subagents, and its last message is its result (wait_agent returns it)."),
        parameters={"type": "object", "properties": {
            "task_name": {"type": "string", "description": "A short name for the task (letters, digits, _): "
                                                           "the subagent is /root/<task_name>."},
            "message": {"type": "string", "description": "The task, with everything the subagent needs to know."}},
            "required": ["task_name", "message"]}),
    FunctionTool(name="wait_agent", description=(
        "Wait until the subagents named (all running ones if none) have finished, or the timeout passes; "
        "returns each one's status and result."),
        parameters={"type": "object", "properties": {
            "targets": {"type": "array", "items": {"type": "string"}},
            "timeout_ms": {"type": "integer", "description": f"Default {WAIT_MS}, at most {MAX_WAIT_MS}."}}}),
    FunctionTool(name="send_message", description="Send a message a running subagent reads at its next step.",
                 parameters={"type": "object", "properties": {"target": _TARGET, "message": _MESSAGE},
                             "required": ["target", "message"]}),
    FunctionTool(name="followup_task", description="Give a subagent that has finished another task.",
                 parameters={"type": "object", "properties": {"target": _TARGET, "message": _MESSAGE},
                             "required": ["target", "message"]}),
    FunctionTool(name="interrupt_agent", description="Stop a subagent.",
                 parameters={"type": "object", "properties": {"target": _TARGET}, "required": ["target"]}),
    FunctionTool(name="list_agents", description="List the subagents and their status.",
                 parameters={"type": "object", "properties": {"path_prefix": {"type": "string"}}}),
)  # fmt: skip


@dataclass
class _Call:
    """A multi-agent call as the model writes it; complete, the server runs it."""

    item: UnknownItem
    rooms: Rooms

    def opened(self, where: Where) -> Sequence[StreamEvent]:
        return ()

    def delta(self, chunk: str, where: Where) -> Sequence[StreamEvent]:
        return ()

    def close(self, arguments: str, status: ItemEnd, where: Where) -> Closed:
        self.item.arguments = arguments  # type: ignore[attr-defined]
        if status == "incomplete":  # cut short by the token limit: nothing runs
            return Closed()
        return Closed(run=partial(_serve, self))


def _shown(room: Room, context: ServerContext) -> list[StreamEvent]:
    """What the subagents made since the last look, placed in the output; what they spent, counted."""
    items, spent = room.take_shown()
    events: list[StreamEvent] = []
    for item in items:
        placed, added = context.slots.open(item)
        events += [added, context.slots.close(item, placed)]
    for usage in spent:
        context.count(usage)
    return events


async def _serve(call: _Call, context: ServerContext, where: Where) -> AsyncIterator[list[StreamEvent]]:
    """The call done, then its action (a wait showing what the subagents make as they make it), then
    its output. The root's calls show what the subagents made; a subagent's own calls (in a run of
    its own) leave that to the root's."""
    item = call.item
    yield [context.slots.close(item, where)]
    action, values = str(item.action), as_object(str(item.arguments))  # type: ignore[attr-defined]
    speaking = call.rooms.speaker(context.response.id)
    room, caller = speaking if speaking is not None else (None, ROOT)
    team = room.team if room is not None else None
    found: dict[str, Any]
    if room is None or team is None:
        found = {"error": "No subagents can run for this response."}
    else:
        shows = caller == ROOT
        if action == "wait_agent":
            result: dict[str, Any] = {}
            async with team.waiting(caller):
                async for events in _wait(room, team, caller, values, result):
                    yield [*events, *(_shown(room, context) if shows else [])]
            found = result
        else:
            found, said = _act(team, caller, action, values)
            if said is not None:
                placed, added = context.slots.open(said)
                yield [added, context.slots.close(said, placed)]
        if shows:
            yield _shown(room, context)
    output = UnknownItem(type="multi_agent_call_output", id=new_id("maco"), action=action,
                         call_id=item.call_id,  # type: ignore[attr-defined]
                         output=[{"type": "output_text", "text": json.dumps(found), "annotations": []}])  # fmt: skip
    placed, added = context.slots.open(output)
    yield [added, context.slots.close(output, placed)]


def _act(team: Team, caller: str, action: str, values: dict[str, Any]) -> tuple[dict[str, Any], Item | None]:
    """Every action but a wait, made by ``caller``: its answer, and the ``agent_message`` it sends, if any."""
    if action == "spawn_agent":
        message = str(values.get("message") or "")
        if not message:
            return {"error": "spawn_agent needs a 'message': the task."}, None
        spawned = team.spawn(str(values.get("task_name") or "agent"), message, parent=caller)
        return {"agent": spawned.name, "status": spawned.status}, None
    if action == "list_agents":
        prefix = str(values.get("path_prefix") or ("" if caller == ROOT else f"{caller}/"))
        return {"agents": [{"name": name, "status": agent.entry()} for name, agent in team.members.items()
                           if name.startswith(prefix)]}, None  # fmt: skip
    agent = team.find(str(values.get("target") or ""), caller)
    if agent is None:
        return {"error": f"No subagent {values.get('target')!r}; list_agents lists them."}, None
    if action == "interrupt_agent":
        team.interrupt(agent)
        return {"agent": agent.name, "status": "interrupted"}, None
    if action in ("send_message", "followup_task"):
        text = str(values.get("message") or "")
        team.send(agent, text, follow_up=action == "followup_task")
        said = UnknownItem(type="agent_message", id=new_id("amsg"), author=caller, recipient=agent.name,
                           content=[{"type": "input_text", "text": text}])  # fmt: skip
        return {"agent": agent.name, "status": agent.status}, said
    return {"error": f"Unknown multi-agent action {action!r}."}, None


async def _wait(
    room: Room, team: Team, caller: str, values: dict[str, Any], result: dict[str, Any]
) -> AsyncIterator[list[StreamEvent]]:
    """Until the targets (the caller's own subagents, if none named) have finished or the time is up,
    once per change; ``result`` is then filled."""
    asked = values.get("targets")
    targets = [target for target in asked if isinstance(target, str)] if isinstance(asked, list) else None
    found = [team.find(target, caller) for target in targets] if targets is not None else team.children(caller)
    named = [agent for agent in found if agent is not None]
    timeout = values.get("timeout_ms")
    seconds = min(timeout if isinstance(timeout, int) and timeout > 0 else WAIT_MS, MAX_WAIT_MS) / 1000
    deadline = time.monotonic() + seconds
    names = [agent.name for agent in named]
    while True:
        room.changed.clear()
        yield []
        left = deadline - time.monotonic()
        if not team.running(names) or left <= 0:
            break
        try:
            await asyncio.wait_for(room.changed.wait(), left)
        except TimeoutError:
            pass
    result.update(status={agent.name: agent.entry() for agent in named}, timed_out=team.running(names))


class MultiAgentKind:
    """The root's multi-agent calls (see the module docstring), run against the response's room."""

    name = MULTI_AGENT_TOOL
    tool_types = (MULTI_AGENT_TOOL,)
    item_types: ClassVar[Mapping[str, str]] = {"multi_agent_call": "mac", "multi_agent_call_output": "maco",
                                                "agent_message": "amsg"}  # fmt: skip

    def __init__(self, rooms: Rooms) -> None:
        self.rooms = rooms

    def offer(self, tool: Tool, tools: ToolPlan, param: str) -> None:
        for function in FUNCTIONS:
            tools.add(function, Route(self.name, function.name), param)

    def open_call(self, route: Route, call_id: str) -> _Call:
        item = UnknownItem(type="multi_agent_call", id=new_id("mac"), action=route.name,
                           arguments="", call_id=call_id)  # fmt: skip
        return _Call(item, self.rooms)

    def chosen(self, ref: ToolRef, name: str, route: Route) -> bool:
        return ref.type == self.name

    def replay(self, item: Item, context: Replay) -> list[Item] | None:
        """A call and its output as the function call and result the model made and read; a message
        the root sent, not at all (its call says it)."""
        fields = item.model_extra or {}
        if item.type == "multi_agent_call":
            call_id, name = str(fields.get("call_id") or item.id), str(fields.get("action"))
            return [FunctionCall(id=item.id, call_id=call_id, name=name, arguments=str(fields.get("arguments") or "{}"),
                                 status="completed")]  # fmt: skip
        if item.type == "multi_agent_call_output":
            parts = fields.get("output") or []
            text = "".join(part.get("text", "") for part in parts if isinstance(part, dict))
            return [FunctionCallOutput(id=item.id, call_id=str(fields.get("call_id") or ""), output=text,
                                       status="completed")]  # fmt: skip
        return []

    async def prepare(self, setup: ToolSetup) -> Sequence[Recorded]:
        """Only a request with ``multi_agent: {"enabled": true}`` has these calls."""
        config = setup.request.multi_agent
        if config is None or not config.enabled:
            raise InvalidRequest("Subagents are asked for with 'multi_agent': {'enabled': true}, not as a tool.",
                                 param="tools", code="unsupported_value")  # fmt: skip
        return []
