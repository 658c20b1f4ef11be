"""Calls the server runs itself between model turns (an MCP tool, the file search): each kind's
output records them as :data:`ServerCall`s, and the loop runs whatever is pending the same way,
without knowing the kind."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from responsa.protocol import StreamEvent

if TYPE_CHECKING:
    from ._file_search import FileSearcher
    from ._mcp import McpPlan

__all__ = ["ServerCall", "ServerTools"]


@dataclass(frozen=True)
class ServerTools:
    """What one run's server-side calls are made with."""

    mcp: McpPlan | None
    file_search: FileSearcher | None
    span: Any = None
    """The run's trace span (calls are traced inside it)."""


ServerCall = Callable[[ServerTools], AsyncIterator[list[StreamEvent]]]
"""A recorded call: run with the run's tools, it yields its events (running, then its result)."""
