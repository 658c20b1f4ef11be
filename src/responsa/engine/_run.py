"""One generation in flight and everything it carries from start to the final save."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import AsyncExitStack
from dataclasses import dataclass, field

import anyio

from responsa.backends import Backend, ModelEvent
from responsa.protocol import CreateResponseRequest, Item, ResponsaError, ResponseObject, StreamEvent
from responsa.store import Store

from ._accumulate import OutputBuilder
from ._client_tools import ClientTools
from ._event_log import EventLog
from ._mcp import McpPlan

__all__ = ["Run"]


@dataclass
class Run:
    """One generation in flight: its request, the response being built, and the open model stream."""

    request: CreateResponseRequest
    response: ResponseObject
    input_items: list[Item]
    store: Store
    """The store as the request's tenant sees it."""
    context: list[Item]
    """History and input: what the model reads before this response's own output."""
    backend: Backend
    builder: OutputBuilder
    opening: list[StreamEvent]
    """Events of what happened before the model started (lifecycle, MCP listings, approved calls)."""
    model_events: AsyncIterator[list[ModelEvent]]
    exit_stack: AsyncExitStack
    fault: str | None = None
    mcp: McpPlan | None = None
    client: ClientTools = field(default_factory=ClientTools)
    """The client-run tools as the model sees them."""
    unavailable: frozenset[str] = frozenset()
    """Hosted tool types the backend cannot run, left out of what the model sees."""
    cancel_requested: anyio.Event = field(default_factory=anyio.Event)
    done: anyio.Event = field(default_factory=anyio.Event)
    error: ResponsaError | None = None
    recorded: anyio.Event | None = None
    """Set once the attempt to write the in-progress row of a streamed response is over."""
    inputs_saved: bool = False
    persisted: bool = False
    """The final state is saved (it is, before the terminal event is sent)."""
    tool_calls_made: int = 0
    log: EventLog | None = None
    """Background runs only: every event, for followers here and (via the store) anywhere."""
    shutting_down: bool = False

    @property
    def tenant(self) -> str:
        return self.store.tenant
