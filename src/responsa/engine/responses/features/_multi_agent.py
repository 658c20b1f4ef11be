"""``multi_agent: {"enabled": true, "max_concurrent_subagents": N}`` (openai's beta ``responses.create``;
the Agents SDKs' ``OpenAIHostedMultiAgentModel``): the server runs the request's model as the root agent
``/root``, offered the multi-agent calls (the ``multi_agent`` tool kind) to spawn subagents, which run
side by side within the one response.

The feature adds the kind's tool to the request, keeps the response's room (its subagents and its
inbox) while it runs, and marks every item the root makes as ``/root``'s (``agent.agent_name``; the
root's last answer is its ``final_answer``, as every response's is). Where the response runs on a
WebSocket, a call the client runs does not end it: the agent that made it waits for the client's output
(``response.inject``), and the others go on."""

from __future__ import annotations

from collections.abc import Sequence

from responsa.protocol import CreateResponseRequest, Item, ResponseObject, UnknownTool
from responsa.store import Store

from ...tools.multi_agent import (
    DEFAULT_CONCURRENCY,
    MULTI_AGENT_FIELD,
    MULTI_AGENT_TOOL,
    ROOT,
    SPEAKER,
    Inbox,
    Room,
    Rooms,
    Team,
    attributed,
)
from ._features import FeatureRun

__all__ = ["MultiAgentFeature"]


class _MultiAgentRun(FeatureRun):
    def __init__(self, rooms: Rooms, concurrency: int) -> None:
        self._rooms = rooms
        self._concurrency = concurrency
        self.inbox: Inbox = Inbox()
        self._tenant = ""
        self._request: CreateResponseRequest | None = None
        self._response_id: str | None = None

    def revise(self, request: CreateResponseRequest) -> CreateResponseRequest:
        tool = UnknownTool(type=MULTI_AGENT_TOOL)
        return request.model_copy(update={"tools": [*request.tools, tool]})

    async def plan(
        self, store: Store, request: CreateResponseRequest, context: Sequence[Item]
    ) -> CreateResponseRequest:
        self._tenant, self._request = store.tenant, request
        return request

    def begin(self, response: ResponseObject) -> None:
        runner = self._rooms.runner
        if self._request is None or runner is None or self._response_id is not None:
            return
        room = Room(response.id, self._tenant, self._request, self._concurrency, runner, self.inbox)
        room.team = Team(room)
        self._rooms.open(room)
        self._response_id = response.id

    def item_opened(self, item: Item) -> None:
        if not getattr(item, "agent", None):  # a subagent's, shown by the root's call, is its own
            attributed(item, ROOT)

    def ended(self) -> None:
        if self._response_id is not None:
            self._rooms.close(self._response_id)


class MultiAgentFeature:
    """Hosted multi-agent: a request with ``multi_agent.enabled`` runs subagents (see the module)."""

    name = MULTI_AGENT_FIELD
    fields = frozenset({MULTI_AGENT_FIELD})
    items: frozenset[type] = frozenset()

    def __init__(self, rooms: Rooms) -> None:
        self._rooms = rooms

    def open(self, request: CreateResponseRequest, context_types: frozenset[type]) -> FeatureRun | None:
        config = request.multi_agent
        if config is None or not config.enabled or SPEAKER.get() is not None:  # a subagent's run: its root's room
            return None
        return _MultiAgentRun(self._rooms, config.max_concurrent_subagents or DEFAULT_CONCURRENCY)
