"""One multi-agent response's shared state (a ``Room``): its inbox, its subagents, the items they made
that the response has yet to show, and the usage they spent; ``Rooms`` finds it by response id for the
calls the server runs, and starts subagents' runs through the ``Runner`` the server sets."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from responsa.backends import TokenUsage
from responsa.protocol import ROOT_AGENT, CreateResponseRequest, Item, StreamEvent

from ._inbox import Inbox

if TYPE_CHECKING:
    from ._team import Team

__all__ = ["DEFAULT_CONCURRENCY", "ROOT", "SPEAKER", "Room", "Rooms", "Runner", "attributed"]

ROOT = ROOT_AGENT
"""The agent the request itself runs; subagents are ``/root/<task name>``."""
DEFAULT_CONCURRENCY = 3
"""Subagents at once when ``max_concurrent_subagents`` is not given (OpenAI's default)."""

Runner = Callable[[str, CreateResponseRequest], AsyncIterator[list[StreamEvent]]]
"""Runs a subagent's turn as the tenant's (first) response (second): its events, to the end."""


def attributed(item: Item, agent: str) -> Item:
    """``item`` marked as made by ``agent`` (``agent.agent_name``, as OpenAI marks every item)."""
    item.agent = {"agent_name": agent}  # type: ignore[union-attr]  # an extra field of the wire item
    return item


SPEAKER: ContextVar[tuple[Room, str] | None] = ContextVar("responsa_subagent", default=None)
"""Set in a subagent's task: the room it works in and its name (its runs' multi-agent calls are its)."""


@dataclass
class Room:
    """What the agents of one response share."""

    response_id: str
    tenant: str
    request: CreateResponseRequest
    """The root's request: a subagent runs with its model, tools and settings."""
    concurrency: int
    runner: Runner
    inbox: Inbox = field(default_factory=Inbox)
    shown: list[Item] = field(default_factory=list)
    """Items the subagents made, for the response's output at the root's next multi-agent call."""
    spent: list[TokenUsage] = field(default_factory=list)
    """What the subagents' model calls used, for the response's usage with those items."""
    changed: asyncio.Event = field(default_factory=asyncio.Event)
    """Set whenever a subagent shows an item or ends (a wait looks again)."""
    team: Team | None = None
    """The subagents, made with the room."""

    def show(self, item: Item, agent: str) -> None:
        self.shown.append(attributed(item, agent))
        self.changed.set()

    def take_shown(self) -> tuple[list[Item], list[TokenUsage]]:
        """The items to show now, and what the subagents spent since the last take."""
        items, self.shown = self.shown, []
        spent, self.spent = self.spent, []
        return items, spent


class Rooms:
    """The multi-agent responses running in this process, by response id."""

    def __init__(self) -> None:
        self._rooms: dict[str, Room] = {}
        self.runner: Runner | None = None
        """Set once the responses' service exists (it is made after the tool kinds)."""

    def open(self, room: Room) -> None:
        self._rooms[room.response_id] = room

    def speaker(self, response_id: str) -> tuple[Room, str] | None:
        """The room a call of ``response_id`` is made in and the agent making it: a subagent's (its
        runs are responses of their own, run in its task) or the root's."""
        speaking = SPEAKER.get()
        if speaking is not None:
            return speaking
        room = self._rooms.get(response_id)
        return None if room is None else (room, ROOT)

    def close(self, response_id: str) -> None:
        """The response ended: its subagents are stopped, the room forgotten."""
        room = self._rooms.pop(response_id, None)
        if room is not None and room.team is not None:
            room.team.stop_all()
