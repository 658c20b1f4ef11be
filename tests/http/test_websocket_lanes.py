"""Lanes on the WebSocket (``stream_id``): responses in one lane run in order, lanes run side by side,
every message of a named lane carries its ``stream_id``; the connection's limits; two lanes forking
one ``store: false`` chain. A slow simulated model (a latency profile) makes the overlap visible."""

from __future__ import annotations

import json
import logging
from collections.abc import Iterator
from typing import Any

import pytest
from websockets.sync.client import ClientConnection, connect

from tests.conftest import LiveServer, profiled_server
from tests.http.test_websocket import TERMINAL, assert_error, turn, ws_url

SLOW = "[models.slowpoke]\nttft_ms = 150\ntokens_per_second = 40\n"


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveServer]:
    yield from profiled_server(tmp_path_factory, "lanes", SLOW, embedded=False)


def send(socket: ClientConnection, **body: Any) -> None:
    socket.send(json.dumps({"type": "response.create", **body}))


def read_until(socket: ClientConnection, ends: int) -> list[dict[str, Any]]:
    """Messages until ``ends`` terminal ones have come."""
    messages: list[dict[str, Any]] = []
    while ends:
        messages.append(json.loads(socket.recv(timeout=60)))
        ends -= messages[-1]["type"] in TERMINAL
    return messages


def test_lanes_run_side_by_side_and_each_message_names_its_lane(server: LiveServer) -> None:
    ask = "Reply with: one two three four five six seven eight"
    with connect(ws_url(server)) as socket:
        send(socket, model="slowpoke", input=ask, stream_id="a")
        send(socket, model="slowpoke", input=ask, stream_id="b.2")
        messages = read_until(socket, 2)
    lanes = {message["stream_id"] for message in messages}
    assert lanes == {"a", "b.2"}
    order = [(message["stream_id"], message["type"]) for message in messages]
    # b's response began before a's ended: the lanes overlapped.
    assert order.index(("b.2", "response.created")) < order.index(("a", "response.completed"))
    for lane in lanes:
        numbers = [message["sequence_number"] for message in messages if message["stream_id"] == lane]
        assert numbers == list(range(len(numbers)))


def test_one_lane_runs_in_order_and_the_default_lane_names_none(server: LiveServer) -> None:
    with connect(ws_url(server)) as socket:
        send(socket, model="slowpoke", input="Reply with: first", stream_id="x")
        send(socket, model="slowpoke", input="Reply with: second", stream_id="x")
        lane = read_until(socket, 2)
        plain = turn(socket, model="sim", input="hello")
    kinds = [message["type"] for message in lane]
    assert kinds.index("response.completed") < kinds.index("response.created", 1)  # the second waited
    assert all("stream_id" not in message for message in plain)


def test_two_lanes_fork_one_store_false_chain(server: LiveServer) -> None:
    with connect(ws_url(server)) as socket:
        root = turn(socket, model="sim", input="My name is Ada.", store=False)[-1]["response"]
        send(socket, model="sim", input="What is my name?", store=False, previous_response_id=root["id"], stream_id="l")
        send(socket, model="sim", input="Spell my name.", store=False, previous_response_id=root["id"], stream_id="r")
        messages = read_until(socket, 2)
    ends = {message["stream_id"]: message for message in messages if message["type"] in TERMINAL}
    assert {lane: end["type"] for lane, end in ends.items()} == {"l": "response.completed", "r": "response.completed"}
    assert all(end["response"]["previous_response_id"] == root["id"] for end in ends.values())


def test_a_malformed_stream_id_is_refused(server: LiveServer) -> None:
    with connect(ws_url(server)) as socket:
        for bad in ("has space", "", "x" * 257, 7):
            send(socket, model="sim", input="x", stream_id=bad)
            error = json.loads(socket.recv(timeout=10))
            assert_error(error, 400, "invalid_stream_id")
            assert error["error"]["param"] == "stream_id" and "stream_id" not in error
        assert turn(socket, model="sim", input="still here")[-1]["type"] == "response.completed"


def test_named_lanes_and_active_responses_are_limited(server: LiveServer) -> None:
    with connect(ws_url(server)) as socket:
        for index in range(32):
            assert turn(socket, model="sim", input="x", stream_id=f"lane{index}", generate=False)[-1]["type"] == (
                "response.completed"
            )
        send(socket, model="sim", input="x", stream_id="lane32")
        error = json.loads(socket.recv(timeout=10))
        assert_error(error, 400, "websocket_stream_limit_reached")
        assert error["stream_id"] == "lane32"
        assert turn(socket, model="sim", input="x", stream_id="lane0")[-1]["type"] == "response.completed"

    with connect(ws_url(server)) as socket:
        for _ in range(17):
            send(socket, model="slowpoke", input="Reply with: a b c", stream_id="busy")
        messages = read_until(socket, 17)
    errors = [message for message in messages if message["type"] == "error"]
    assert len(errors) == 1 and errors[0]["error"]["code"] == "websocket_stream_limit_reached"
    assert sum(message["type"] == "response.completed" for message in messages) == 16


def test_a_client_leaving_with_lanes_running_stops_them_quietly(
    server: LiveServer, caplog: pytest.LogCaptureFixture
) -> None:
    with connect(ws_url(server)) as socket:
        send(socket, model="slowpoke", input="Reply with: a b c d e f g h", stream_id="q")
        send(socket, model="slowpoke", input="Reply with: a b c d e f g h")
        assert json.loads(socket.recv(timeout=10))["type"] == "response.created"
    with connect(ws_url(server)) as socket:  # the server goes on serving
        assert turn(socket, model="sim", input="hello")[-1]["type"] == "response.completed"
    assert [record for record in caplog.records if record.levelno >= logging.ERROR] == []
