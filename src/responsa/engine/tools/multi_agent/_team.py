"""The subagents of one response: each its own model loop (its own context, the request's model and
tools, the server's included), run side by side, at most ``concurrency`` at once; what each makes is
shown in the response's output, attributed to it, and its last message is its result.

A subagent's call to a client tool is shown like any item; where a client can inject (the response runs
on a WebSocket), the subagent waits for the output in the room's inbox and goes on; elsewhere it ends
``failed``, saying so. A message sent to a subagent (``send_message``, ``followup_task``) is read at its
next turn; a follow-up restarts one that has finished. A subagent may spawn its own
(``<its name>/<task name>``), within the same limit of subagents at once across the tree."""

from __future__ import annotations

import asyncio
import re
import time
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Any, Literal

from responsa.protocol import Item, Message, ResponseObject, item_text

from ...output import tokens_of
from ._inbox import awaited_key
from ._room import ROOT, SPEAKER, Room

__all__ = ["CLIENT_CALLS", "Subagent", "Team"]

Status = Literal["queued", "running", "completed", "failed", "interrupted"]

CLIENT_CALLS = frozenset({"function_call", "custom_tool_call", "shell_call", "local_shell_call", "apply_patch_call",
                          "computer_call"})  # fmt: skip
"""Calls a client runs: waiting, unless the output that answers one is beside it (a hosted shell's)."""

INSTRUCTIONS = (
    "You are {name}, a subagent of {parent}. Do the task you are given with the tools you have, then answer "
    "with its result: your last message is what {parent} receives."
)
_NAME = re.compile(r"[^a-z0-9_-]+")


def _waiting(output: Sequence[Item]) -> list[Item]:
    """The client's calls in a turn's output that nothing in it answers."""
    answered = {getattr(item, "call_id", None) for item in output if getattr(item, "type", "").endswith("_output")}
    return [item for item in output if item.type in CLIENT_CALLS and getattr(item, "call_id", None) not in answered]


@dataclass
class Subagent:
    name: str
    context: list[Item]
    status: Status = "queued"
    result: str = ""
    messages: list[str] = field(default_factory=list)
    """Sent to it while it works: read at its next turn."""
    task: asyncio.Task[None] | None = None

    def entry(self) -> dict[str, Any] | str:
        """How ``list_agents`` and ``wait_agent`` show it, as Codex's agent status reads in JSON: an
        ended one with its result (``{"completed": "..."}``), one not ended by name (``"running"``)."""
        if self.status in ("completed", "failed", "interrupted"):
            return {self.status: self.result}
        return self.status


class Team:
    """The subagents of a room."""

    def __init__(self, room: Room) -> None:
        self._room = room
        self._slots = asyncio.Semaphore(room.concurrency)
        self.members: dict[str, Subagent] = {}

    def spawn(self, task_name: str, message: str, parent: str = ROOT) -> Subagent:
        """A subagent of ``parent`` (the root, or a subagent: ``<parent>/<task name>``), started."""
        base = f"{parent}/{_NAME.sub('_', task_name.lower()).strip('_') or 'agent'}"
        name, number = base, 1
        while name in self.members:
            number += 1
            name = f"{base}_{number}"
        agent = Subagent(name, [Message(role="user", content=message)])
        self.members[name] = agent
        self._start(agent)
        return agent

    def _start(self, agent: Subagent) -> None:
        agent.status = "queued"
        agent.task = asyncio.get_running_loop().create_task(self._run(agent))

    def find(self, target: str, caller: str = ROOT) -> Subagent | None:
        """A subagent by its name, or by its name under the caller or under the root."""
        return (
            self.members.get(target) or self.members.get(f"{caller}/{target}") or self.members.get(f"{ROOT}/{target}")
        )

    def children(self, parent: str) -> list[Subagent]:
        return [agent for name, agent in self.members.items() if name.rsplit("/", 1)[0] == parent]

    @asynccontextmanager
    async def waiting(self, caller: str) -> AsyncIterator[None]:
        """A subagent waiting for its own subagents lets go of its place among those running meanwhile
        (else with one place, its children would wait for it and it for them)."""
        if caller == ROOT:
            yield
            return
        self._slots.release()
        try:
            yield
        finally:
            await self._slots.acquire()

    def send(self, agent: Subagent, message: str, follow_up: bool) -> None:
        """A message for ``agent``'s next turn; a follow-up starts one that has finished again."""
        agent.messages.append(message)
        if follow_up and agent.status not in ("queued", "running"):
            self._start(agent)

    def interrupt(self, agent: Subagent) -> None:
        if agent.task is not None and not agent.task.done():
            agent.task.cancel()

    def stop_all(self) -> None:
        for agent in self.members.values():
            self.interrupt(agent)

    def running(self, names: Sequence[str]) -> bool:
        return any(self.members[name].status in ("queued", "running") for name in names)

    async def _run(self, agent: Subagent) -> None:
        SPEAKER.set((self._room, agent.name))  # its runs' calls are its own, their use the response's (this task only)
        try:
            async with self._slots:
                agent.status = "running"
                self._room.changed.set()
                await self._turns(agent)
        except asyncio.CancelledError:
            agent.status, agent.result = "interrupted", agent.result or "Interrupted before it answered."
        except Exception as error:  # a subagent that fails ends so; the response goes on
            agent.status, agent.result = "failed", f"{type(error).__name__}: {error}"
        finally:
            self._room.changed.set()

    async def _turns(self, agent: Subagent) -> None:
        room = self._room
        while True:
            agent.context += [Message(role="user", content=text) for text in agent.messages]
            agent.messages.clear()
            response = await self._turn(agent)
            output = list(response.output)
            agent.context += output
            if response.status == "failed":
                agent.status = "failed"
                agent.result = response.error.message if response.error is not None else "The subagent failed."
                return
            waiting = _waiting(output)
            if waiting:
                if not room.inbox.open:
                    agent.status = "failed"
                    agent.result = ("It called a client tool, which only a client on the WebSocket can answer "
                                    "(response.inject).")  # fmt: skip
                    return
                answers = await room.inbox.take([awaited_key(item) for item in waiting])
                for answer in answers:
                    room.show(answer.model_copy(), agent.name)
                agent.context += answers
                continue
            if agent.messages:
                continue
            last = next((item for item in reversed(output) if isinstance(item, Message)), None)
            agent.status, agent.result = "completed", item_text(last) if last is not None else ""
            return

    async def _turn(self, agent: Subagent) -> ResponseObject:
        """One run of the subagent's model loop over its context; every item it makes is shown."""
        room = self._room
        root = room.request
        instructions = INSTRUCTIONS.format(name=agent.name, parent=agent.name.rsplit("/", 1)[0])
        if root.instructions:
            instructions = f"{instructions}\n\n{root.instructions}"
        request = root.model_copy(update={
            "input": list(agent.context), "instructions": instructions, "tool_choice": "auto", "store": False,
            "stream": True, "background": False, "previous_response_id": None, "conversation": None, "text": None,
            "metadata": None, "include": None,
        })  # fmt: skip
        ended: ResponseObject | None = None
        started = time.monotonic()
        async for batch in room.runner(room.tenant, request):
            for event in batch:
                if event.type == "response.output_item.done":
                    room.show(event.item.model_copy(), agent.name)  # type: ignore[union-attr]
                response = getattr(event, "response", None)
                if isinstance(response, ResponseObject) and event.type in _ENDS:
                    ended = response
        if ended is None:
            raise RuntimeError(f"the subagent's run ended without a response after {time.monotonic() - started:.1f}s")
        spent = tokens_of(ended.usage)
        if spent is not None:
            room.spent.append(spent)
        return ended


_ENDS = frozenset({"response.completed", "response.incomplete", "response.failed"})
