"""The calls the model left for the server in a turn, run one after the other: the loop's work, so
that the output builder only records (it is IO-free, testable by feeding it lists of events)."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from typing import Any

from responsa.protocol import StreamEvent

from ._accumulate import OutputBuilder

__all__ = ["serve_calls"]


async def serve_calls(
    builder: OutputBuilder, span: Any = None, stop: Callable[[], bool] | None = None
) -> AsyncIterator[list[StreamEvent]]:
    """Run the calls waiting for the server, in the order the model made them, yielding their events
    as the builder numbers them; none is started once ``stop`` says so (the builder cuts those left,
    as on a cancel)."""
    calls = builder.server.take()
    context = builder.server.context(span, builder.count)
    for call, where in calls:
        if stop is not None and stop():
            return
        async for events in call(context, where):
            yield builder.emitter.emit_all(events)
        builder.server.served(where)
