"""A stream event as JSON text, as SSE frames and WebSocket messages carry it."""

from __future__ import annotations

import secrets
from collections.abc import Callable

import orjson

from ._base import dump_json
from ._events import (
    CustomToolCallInputDelta,
    FunctionCallArgumentsDelta,
    OutputTextDelta,
    ReasoningSummaryTextDelta,
    ReasoningTextDelta,
    StreamEvent,
)
from ._tool_events import (
    CodeInterpreterCodeDelta,
    McpCallArgumentsDelta,
)

__all__ = ["EventJson", "event_json", "obfuscate", "obfuscated"]

EventJson = Callable[[StreamEvent], bytes]
"""What encodes an event: :func:`event_json`, or a run's own (which encoded some ahead)."""

_FLAT_EVENTS = frozenset(
    {
        OutputTextDelta,
        FunctionCallArgumentsDelta,
        McpCallArgumentsDelta,
        CustomToolCallInputDelta,
        CodeInterpreterCodeDelta,
        ReasoningTextDelta,
        ReasoningSummaryTextDelta,
    }
)
"""Events of plain JSON fields only, sent once per token: encoded from their fields directly."""


def event_json(event: StreamEvent) -> bytes:
    """``event`` as the JSON text of its SSE ``data:`` line or WebSocket message."""
    if type(event) in _FLAT_EVENTS and not event.__pydantic_extra__:
        return orjson.dumps(event.__dict__)  # the same JSON as pydantic's, in a third of the time
    return dump_json(event)


OBFUSCATION_BLOCK = 64
"""A delta event's JSON is padded to a multiple of this many bytes."""
_FIELD = b',"obfuscation":"'


def obfuscate(kind: str, data: bytes) -> bytes:
    """A delta event's JSON ``data`` with OpenAI's ``obfuscation`` field: random characters that bring
    it to a multiple of :data:`OBFUSCATION_BLOCK` bytes, so that frame sizes on the wire do not tell
    the length of each token. Other events are left as they are."""
    if not kind.endswith(".delta"):
        return data
    pad = -(len(data) + len(_FIELD) + 1) % OBFUSCATION_BLOCK or OBFUSCATION_BLOCK
    return data[:-1] + _FIELD + secrets.token_urlsafe(pad)[:pad].encode() + b'"}'


def obfuscated(json: EventJson) -> EventJson:
    """``json`` with :func:`obfuscate` applied to what it encodes."""

    def encode(event: StreamEvent) -> bytes:
        return obfuscate(event.type, json(event))

    return encode
