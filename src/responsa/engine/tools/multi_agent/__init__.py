"""Hosted multi-agent: the root's calls that run subagents (``MultiAgentKind``), the subagents
(``Team``), what one response's agents share (``Room``, with the ``Inbox`` the client's injected
outputs arrive in) and the rooms of the responses running here (``Rooms``)."""

from ._inbox import Inbox, answered_key, awaited_key, injected
from ._kind import MULTI_AGENT_FIELD, MULTI_AGENT_TOOL, MultiAgentKind
from ._room import DEFAULT_CONCURRENCY, ROOT, SPEAKER, Room, Rooms, Runner, attributed
from ._team import CLIENT_CALLS, Subagent, Team

__all__ = [
    "CLIENT_CALLS",
    "DEFAULT_CONCURRENCY",
    "MULTI_AGENT_FIELD",
    "MULTI_AGENT_TOOL",
    "ROOT",
    "SPEAKER",
    "Inbox",
    "MultiAgentKind",
    "Room",
    "Rooms",
    "Runner",
    "Subagent",
    "Team",
    "answered_key",
    "attributed",
    "awaited_key",
    "injected",
]
