"""A long chain's later turns are checked against the whole chain, though what its earlier turns were
scanned for is kept and only the new items are scanned (``ContextChecks``, from ``LONG_CONTEXT``
items): a function call output answers a call of an earlier turn, an output that answers none is a 400 on any turn, and the model
reads a file of the first turn on every later one, and a late result of an asynchronous call of a
kept turn as one. Over a WebSocket connection with ``store: false`` (its own cache), a
``previous_response_id`` chain and a conversation."""

from __future__ import annotations

import base64
import json
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import pytest

from responsa.backends import Finish, ModelEvent, ToolCallDelta
from responsa.protocol import LONG_CONTEXT, Message
from tests.in_process import InProcess
from tests.scripted import USAGE, ScriptedBackend, text

TOOL = {"type": "function", "name": "lookup", "parameters": {"type": "object", "properties": {}}}
EARLIER = [
    {"role": role, "content": f"Earlier {number}."} for number in range(LONG_CONTEXT) for role in ("user", "assistant")
]
"""A long start (what is made of shorter contexts is not kept)."""
FIRST = [*EARLIER, {"role": "user", "content": [
    {"type": "input_text", "text": "When is high tide?"},
    {"type": "input_file", "filename": "tides.txt", "file_data": base64.b64encode(b"High tide at 06:12.").decode()},
]}]  # fmt: skip

Turn = Callable[[list[dict[str, Any]]], dict[str, Any]]
"""Sends one turn's input on the chain; the response, or the error's body."""


@contextmanager
def _chain(app: InProcess, mode: str, tool: dict[str, Any] = TOOL) -> Iterator[Turn]:
    """A chain held as ``mode`` says: over a WebSocket connection with ``store: false``, by
    ``previous_response_id``, or in a conversation; ``tool`` offered on every turn."""
    previous: list[str] = []
    if mode == "websocket":
        with app.http.websocket_connect("/v1/responses") as socket:

            def over_socket(items: list[dict[str, Any]]) -> dict[str, Any]:
                body = {"type": "response.create", "model": "scripted", "store": False, "input": items,
                        "tools": [tool], **({"previous_response_id": previous[-1]} if previous else {})}  # fmt: skip
                socket.send_text(json.dumps(body))
                while (event := json.loads(socket.receive_text()))["type"] not in ("response.completed", "error"):
                    pass
                if event["type"] == "error":
                    return {"error": event["error"]}
                previous.append(event["response"]["id"])
                return dict(event["response"])

            yield over_socket
        return
    thread = app.http.post("/v1/conversations", json={}).json()["id"] if mode == "conversation" else None

    def over_http(items: list[dict[str, Any]]) -> dict[str, Any]:
        body: dict[str, Any] = {"model": "scripted", "input": items, "tools": [tool]}
        if thread is not None:
            body["conversation"] = thread
        elif previous:
            body["previous_response_id"] = previous[-1]
        reply = app.http.post("/v1/responses", json=body).json()
        if "id" in reply:
            previous.append(reply["id"])
        return dict(reply)

    yield over_http


def _two_calls() -> list[ModelEvent]:
    return [ToolCallDelta(0, "{}", name="lookup", call_id="call_high"),
            ToolCallDelta(1, "{}", name="lookup", call_id="call_low"), Finish("tool_calls", USAGE)]  # fmt: skip


def _answer(call_id: str, output: str) -> dict[str, Any]:
    return {"type": "function_call_output", "call_id": call_id, "output": output}


@pytest.mark.parametrize("mode", ["websocket", "chain", "conversation"])
def test_later_turns_are_checked_against_the_whole_chain(
    scripted: tuple[InProcess, ScriptedBackend], mode: str
) -> None:
    app, model = scripted
    with _chain(app, mode) as turn:
        model.turns.extend([_two_calls(), text("06:12."), text("Low tide at 12:30."), text("You are welcome.")])
        assert [item["call_id"] for item in turn(FIRST)["output"]] == ["call_high", "call_low"]
        assert turn([_answer("call_high", "06:12")])["status"] == "completed"  # it answers the first turn's call
        assert "High tide at 06:12." in str(model.requests[1].items)  # the first turn's file, read again
        assert turn([_answer("call_low", "12:30")])["status"] == "completed"  # so does a late answer
        assert turn([{"role": "user", "content": "Thanks."}])["status"] == "completed"
        assert "High tide at 06:12." in str(model.requests[3].items)
        error = turn([_answer("call_elsewhere", "?")])["error"]
        assert error["param"] == "input" and "call_elsewhere" in error["message"] and len(model.requests) == 4


@pytest.mark.parametrize("mode", ["websocket", "chain", "conversation"])
def test_a_late_result_of_an_asynchronous_call_of_a_kept_turn_is_read_as_one(
    scripted: tuple[InProcess, ScriptedBackend], mode: str
) -> None:
    """The asynchronous calls of what was kept of a context are kept with it (``Replays``): a result
    sent turns after its call is still read as a late one (a user message naming the call)."""
    app, model = scripted
    with _chain(app, mode, {**TOOL, "async": True}) as turn:
        call = [ToolCallDelta(0, "{}", name="lookup", call_id="call_high"), Finish("tool_calls", USAGE)]
        model.turns.extend([call, text("Looking it up."), text("Noted."), text("06:12, then.")])
        assert [item["type"] for item in turn(FIRST)["output"]] == ["function_call", "message"]
        assert turn([{"role": "user", "content": "Any news?"}])["status"] == "completed"
        assert turn([_answer("call_high", "06:12")])["status"] == "completed"
        late = model.requests[-1].items[-1]
        assert isinstance(late, Message) and "asynchronous call call_high" in str(late.content)
