"""Codex's instant interrupt on a WebSocket (``response.interrupt`` with ``discard_partial_items``):
``response.interrupt.accepted``, a ``response.output_item.interrupted`` for the item the model was
writing, then ``response.incomplete`` (reason ``interrupted``) with what was finished; the stored
response says the same, and the client continues on the same socket from it."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import openai
import pytest
from websockets.sync.client import ClientConnection, connect

from tests.backends.mock_upstream import Stream, text_chunks
from tests.backends.test_chat_completions import Rig, start_rig
from tests.conftest import LiveServer, profiled_server
from tests.http.test_websocket import TERMINAL, turn, ws_url
from tests.http.test_websocket_steering import LONG, SLOW


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveServer]:
    yield from profiled_server(tmp_path_factory, "interrupt", SLOW)


@pytest.fixture
def rig(tmp_path: Path) -> Iterator[Rig]:
    yield from start_rig(tmp_path)


def interrupt_mid_text(socket: ClientConnection, **body: Any) -> list[dict[str, Any]]:
    """Start a response, interrupt it once its first text arrives, and read until it ends."""
    socket.send(json.dumps({"type": "response.create", **body}))
    messages: list[dict[str, Any]] = []
    while not messages or messages[-1]["type"] not in TERMINAL:
        messages.append(json.loads(socket.recv(timeout=120)))
        if messages[-1]["type"] == "response.output_text.delta" and "interrupt" not in str(messages[:-1]):
            target = messages[0]["response"]["id"]
            socket.send(json.dumps({"type": "response.interrupt", "response_id": target,
                                    "mode": "discard_partial_items"}))  # fmt: skip
            messages.append({"type": "sent interrupt"})
    return [message for message in messages if message["type"] != "sent interrupt"]


def check_interrupted(messages: list[dict[str, Any]]) -> dict[str, Any]:
    kinds = [message["type"] for message in messages]
    accepted = kinds.index("response.interrupt.accepted")
    response = messages[-1]["response"]
    assert kinds[-1] == "response.incomplete" and response["incomplete_details"] == {"reason": "interrupted"}
    (dropped,) = [message for message in messages if message["type"] == "response.output_item.interrupted"]
    assert kinds.index("response.output_item.interrupted") > accepted and dropped["response_id"] == response["id"]
    assert dropped["item_id"] not in [item["id"] for item in response["output"]]  # the partial item is gone
    numbers = [message["sequence_number"] for message in messages]
    assert numbers == list(range(numbers[0], numbers[0] + len(numbers)))  # one stream, in order
    assert "response.output_text.done" not in kinds[accepted:]
    return response


def test_an_interrupted_response_drops_its_partial_item_and_the_socket_goes_on(server: LiveServer) -> None:
    client = openai.OpenAI(base_url=server.v1, api_key="-")
    with connect(ws_url(server)) as socket:
        response = check_interrupted(interrupt_mid_text(socket, model="slowpoke", input=LONG))
        assert response["output"] == []
        stored = client.responses.retrieve(response["id"])
        assert stored.status == "incomplete" and stored.incomplete_details is not None
        assert stored.incomplete_details.reason == "interrupted" and stored.output == []
        after = turn(socket, model="sim", input="Go on.", previous_response_id=response["id"])
        assert after[-1]["type"] == "response.completed"


def test_an_interrupt_for_no_running_response_is_an_error_and_a_late_one_is_ignored(server: LiveServer) -> None:
    with connect(ws_url(server)) as socket:
        socket.send(
            json.dumps({"type": "response.interrupt", "response_id": "resp_nope", "mode": "discard_partial_items"})
        )
        error = json.loads(socket.recv(timeout=10))
        assert error["type"] == "error" and error["error"]["code"] == "response_not_found"
        socket.send(json.dumps({"type": "response.interrupt", "response_id": "resp_nope", "mode": "keep_all"}))
        assert json.loads(socket.recv(timeout=10))["error"]["param"] == "mode"
        done = turn(socket, model="sim", input="Hi.")[-1]["response"]
        socket.send(
            json.dumps({"type": "response.interrupt", "response_id": done["id"], "mode": "discard_partial_items"})
        )
        # It ended before the interrupt came: nothing is said, and the socket goes on.
        assert turn(socket, model="sim", input="Still here?")[-1]["type"] == "response.completed"


def test_interrupting_an_upstream_that_stalls_stops_it_at_once(rig: Rig) -> None:
    rig.first.script.extend([Stream(text_chunks("Counting: one, two,"), stall_after=60),
                             Stream(text_chunks("Three."))])  # fmt: skip
    with connect(ws_url(rig.server)) as socket:
        response = check_interrupted(interrupt_mid_text(socket, model="up-model", input="Count to a thousand."))
        assert response["output"] == []
        after = turn(socket, model="up-model", input="Go on.", previous_response_id=response["id"])
        assert after[-1]["response"]["output"][-1]["content"][0]["text"] == "Three."
    asked = rig.first.requests[-1]["messages"]
    assert not any("Counting" in str(message.get("content")) for message in asked)  # the partial text was dropped
