"""Per-token events are encoded from their fields directly; the bytes must be pydantic's exactly."""

from __future__ import annotations

from typing import Any

import pytest

from responsa.engine.output._emitter import Emitter
from responsa.engine.responses.opening._new_response import new_response
from responsa.http._sse import encode_event
from responsa.protocol import (
    CodeInterpreterCodeDelta,
    CreateResponseRequest,
    CustomToolCallInputDelta,
    FunctionCallArgumentsDelta,
    McpCallArgumentsDelta,
    OutputTextDelta,
    ReasoningSummaryTextDelta,
    ReasoningTextDelta,
    StreamEvent,
)

TEXTS = [" hello", 'a "quote" and \\ backslash', "new\nline\ttab\x00\x1f", "ünïcode € 𝄞 \u2028\u2029 <&>", ""]


@pytest.mark.parametrize("text", TEXTS)
def test_fast_frames_equal_pydantic_frames(text: str) -> None:
    events: list[StreamEvent] = [
        OutputTextDelta(item_id="msg_1", output_index=2, content_index=0, delta=text, sequence_number=7),
        OutputTextDelta.of_token("msg_1", 2, text),
        FunctionCallArgumentsDelta(item_id="fc_1", output_index=0, delta=text, sequence_number=8),
        ReasoningTextDelta(item_id="rs_1", output_index=1, content_index=0, delta=text, sequence_number=9),
        OutputTextDelta.model_validate(  # vendor extras take the general path and still round-trip
            {"item_id": "m", "output_index": 0, "content_index": 0, "delta": text, "x_vendor": {"k": 1}}
        ),
    ]
    for event in events:
        expected = f"event: {event.type}\ndata: {event.model_dump_json()}\n\n".encode()
        assert encode_event(event) == expected


TOKEN_DELTAS = [
    (OutputTextDelta, {"content_index": 0}),
    (ReasoningTextDelta, {"content_index": 0}),
    (ReasoningSummaryTextDelta, {"summary_index": 0}),
    (FunctionCallArgumentsDelta, {}),
    (McpCallArgumentsDelta, {}),
    (CustomToolCallInputDelta, {}),
    (CodeInterpreterCodeDelta, {}),
]


@pytest.mark.parametrize("text", TEXTS)
@pytest.mark.parametrize(("kind", "part"), TOKEN_DELTAS)
def test_a_token_delta_made_without_validation_is_the_validated_one(kind: Any, part: dict[str, int], text: str) -> None:
    made = kind.of_token("msg_1", 2, text)
    made.sequence_number = 7  # as the emitter numbers it
    validated = kind(item_id="msg_1", output_index=2, delta=text, sequence_number=7, **part)
    assert made == validated and made.__dict__ == validated.__dict__
    assert list(made.__dict__) == list(validated.__dict__)  # the order the fast encoding writes them in
    assert made.model_dump() == validated.model_dump() and made.model_copy() == validated
    assert made.model_fields_set == validated.model_fields_set
    assert encode_event(made) == f"event: {made.type}\ndata: {validated.model_dump_json()}\n\n".encode()
    if kind is OutputTextDelta:
        assert made.logprobs is not kind.of_token("msg_1", 2, text).logprobs  # a list of its own


def test_opening_events_sharing_one_dump_are_pydantic_frames() -> None:
    """``response.created`` and ``response.in_progress`` of one response are encoded from one dump of it:
    each must be the JSON pydantic writes for the event (unicode, extra fields and all)."""
    request = CreateResponseRequest.model_validate(
        {"model": "m", "input": "hi", "stream": True, "metadata": {"k": "ünï € 𝄞 \u2028"}, "instructions": 'a "q"'}
    )
    response = new_response(request, stored=True)
    response.x_vendor = {"nested": [1, 2.5, None]}  # type: ignore[attr-defined]  # an unknown field kept
    emitter = Emitter(response)
    events = emitter.lifecycle("response.created", "response.in_progress")
    assert [event.type for event in events] == ["response.created", "response.in_progress"]
    assert [event.sequence_number for event in events] == [0, 1]
    for event in events:
        assert emitter.event_json(event) == event.model_dump_json().encode()
