"""Stopping a running response on the WebSocket, for every model.

Steering (``response.steer``): the running response stops at the next safe point, ends ``incomplete``
with reason ``steered``, and its successor starts by itself with the steering input, chained to it;
on the simulator (a slow profile), an upstream (one that stalls) and the embedded model. Input
steering cannot take comes back in ``response.steer.failed``.

Codex's instant interrupt (``response.interrupt`` with ``discard_partial_items``):
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
from openai.types.responses import ResponseSteerAcceptedEvent, ResponseSteerFailedEvent, ResponseSteerPendingEvent
from websockets.sync.client import ClientConnection, connect

from responsa.backends.llama_cpp import DEFAULT_MODEL_NAME
from tests.backends.mock_upstream import Stream, text_chunks
from tests.backends.test_chat_completions import Rig, start_rig
from tests.conftest import LiveServer, profiled_server, serve_app
from tests.engine.tools.mcp_server import streamable_app
from tests.http.test_websocket import TERMINAL, turn, ws_url
from tests.test_codex import call_chunks

SLOW = "[models.slowpoke]\nttft_ms = 100\ntokens_per_second = 20\n"
LONG = "Reply with: " + " ".join(f"word{index}" for index in range(60))
STEER = "Stop there and just say hello."


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveServer]:
    yield from profiled_server(tmp_path_factory, "steering", SLOW)


@pytest.fixture
def rig(tmp_path: Path) -> Iterator[Rig]:
    yield from start_rig(tmp_path)


def steer_mid_response(socket: ClientConnection, **body: Any) -> list[dict[str, Any]]:
    """Start a response, steer it once its first text arrives, and read until the successor ends."""
    socket.send(json.dumps({"type": "response.create", **body}))
    messages: list[dict[str, Any]] = []
    steered = False
    while True:
        message = json.loads(socket.recv(timeout=120))
        messages.append(message)
        if message["type"] == "response.output_text.delta" and not steered:
            target = messages[0]["response"]["id"]
            socket.send(json.dumps({"type": "response.steer", "previous_response_id": target, "input": STEER}))
            steered = True
        ends = [m for m in messages if m["type"] in TERMINAL]
        if len(ends) == 2 or (ends and ends[-1]["type"] == "error"):
            return messages


def check_steered(messages: list[dict[str, Any]], *, cut: bool = False) -> tuple[dict[str, Any], dict[str, Any]]:
    """The steered response and its successor, after checking the events between them; ``cut``: the
    successor may also end at its ``max_output_tokens`` (a real model may write on to the cap)."""
    (accepted,) = [m for m in messages if m["type"] == "response.steer.accepted"]
    ResponseSteerAcceptedEvent.model_validate(accepted)  # the SDK's shape
    first, second = [m["response"] for m in messages if m["type"] in TERMINAL]
    assert accepted["steer"]["previous_response_id"] == first["id"] and accepted["steer"]["id"].startswith("steer_")
    assert first["status"] == "incomplete" and first["incomplete_details"] == {"reason": "steered"}
    created = [m["response"] for m in messages if m["type"] == "response.created"]
    assert [response["id"] for response in created] == [first["id"], second["id"]]
    assert second["previous_response_id"] == first["id"]
    cut_at_cap = cut and second["incomplete_details"] == {"reason": "max_output_tokens"}
    assert second["status"] == ("incomplete" if cut_at_cap else "completed")
    kinds = [m["type"] for m in messages]
    assert kinds.index("response.steer.accepted") < kinds.index("response.incomplete") < len(kinds) - 1
    return first, second


def test_a_steered_response_stops_and_its_successor_answers_the_steer(server: LiveServer) -> None:
    with connect(ws_url(server)) as socket:
        messages = steer_mid_response(socket, model="slowpoke", input=LONG)
    first, second = check_steered(messages)
    assert "word59" not in json.dumps(first["output"])  # it stopped early
    with openai.OpenAI(base_url=server.v1, api_key="-", max_retries=0) as client:
        committed = client.responses.input_items.list(second["id"]).data
        assert [item.content[0].text for item in committed if item.type == "message"] == [STEER]  # type: ignore[union-attr]
        assert client.responses.retrieve(first["id"]).incomplete_details.reason == "steered"  # type: ignore[union-attr]


def test_steering_an_upstream_that_stalls_stops_it_at_once(rig: Rig) -> None:
    rig.first.script.extend([Stream(text_chunks("Counting: one, two,"), stall_after=60),
                             Stream(text_chunks("Hello!"))])  # fmt: skip
    with connect(ws_url(rig.server)) as socket:
        messages = steer_mid_response(socket, model="up-model", input="Count to a thousand.", store=False)
    _first, second = check_steered(messages)
    assert second["output"][-1]["content"][0]["text"] == "Hello!"
    asked = rig.first.requests[-1]["messages"]
    assert asked[-1] == {"role": "user", "content": STEER}
    assert any("Counting: one, two," in str(message.get("content")) for message in asked)  # the part it wrote


def test_steering_the_embedded_model(server: LiveServer) -> None:
    with connect(ws_url(server)) as socket:
        messages = steer_mid_response(socket, model=DEFAULT_MODEL_NAME, input="Write a long story about a fox.",
                                      max_output_tokens=200)  # fmt: skip
    check_steered(messages, cut=True)


def test_steering_input_that_cannot_be_taken_comes_back(server: LiveServer) -> None:
    with connect(ws_url(server)) as socket:
        done = turn(socket, model="sim", input="hello")[-1]["response"]
        cases = [
            ({"previous_response_id": "resp_unknown", "input": STEER}, "response_not_found"),
            ({"previous_response_id": done["id"], "input": STEER}, "response_already_completed"),
            ({"previous_response_id": done["id"], "input": [{"role": "assistant", "content": "x"}]}, "invalid_input"),
            ({"previous_response_id": done["id"], "input": STEER, "stream_id": "a"}, "invalid_input"),
        ]
        for body, code in cases:
            socket.send(json.dumps({"type": "response.steer", **body}))
            failed = json.loads(socket.recv(timeout=10))
            assert failed["type"] == "response.steer.failed" and failed["error"]["code"] == code, failed
            assert failed["steer"]["input"] == body["input"]
            if code != "invalid_input":  # the SDK's type holds valid input only
                ResponseSteerFailedEvent.model_validate(failed)
        assert turn(socket, model="sim", input="still here")[-1]["type"] == "response.completed"


def test_a_steer_for_a_response_that_waits_for_the_client_is_pending(rig: Rig) -> None:
    weather = {"type": "function", "name": "get_weather", "description": "The weather in a city.",
               "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}}  # fmt: skip
    call, _finish = call_chunks("get_weather", {"city": "Paris"})
    more = {"choices": [{"index": 0, "delta": {"content": "Checking the weather."}}]}  # closes the call; then it stalls
    rig.first.script.extend([Stream([call, more], stall_after=60),
                             Stream(text_chunks("Sunny; and hello!"))])  # fmt: skip
    with connect(ws_url(rig.server)) as socket:
        socket.send(json.dumps({"type": "response.create", "model": "up-model", "input": "Weather in Paris?",
                                "tools": [weather], "store": False}))  # fmt: skip
        messages = []
        while not messages or messages[-1]["type"] != "response.steer.pending":
            messages.append(json.loads(socket.recv(timeout=30)))
            if messages[-1]["type"] == "response.output_text.delta":  # the call is made; the upstream stalls
                target = messages[0]["response"]["id"]
                socket.send(json.dumps({"type": "response.steer", "previous_response_id": target, "input": STEER}))
        kinds = [message["type"] for message in messages]
        assert kinds[-2:] == ["response.completed", "response.steer.pending"]
        assert kinds.index("response.steer.accepted") < kinds.index("response.completed")
        assert messages[-2]["response"]["status"] == "completed"  # it ended waiting for the client, not steered
        pending = messages[-1]
        ResponseSteerPendingEvent.model_validate(pending)
        assert pending["reason"] == "waiting_for_required_input"
        (stub,) = pending["required_input"]
        assert stub == {"type": "function_call_output", "call_id": "call_1", "name": "get_weather"}
        answer = {**stub, "output": "Sunny."}
        answer.pop("name")
        follow = turn(socket, model="up-model", tools=[weather], store=False, input=[answer],
                      previous_response_id=pending["steer"]["previous_response_id"])  # fmt: skip
    assert follow[-1]["type"] == "response.completed"
    asked = rig.first.requests[-1]["messages"]
    assert {"role": "user", "content": STEER} in asked and asked[-1]["role"] == "tool"  # the steer went first


@pytest.fixture(scope="module")
def mcp() -> Iterator[str]:
    with serve_app(streamable_app()) as live:
        yield f"{live.url}/mcp"


def steer_a_slow_mcp_call(server: LiveServer, mcp: str, model: str, steer_at: str) -> dict[str, Any]:
    """A response forced to call the MCP server's ``slow_answer``, steered at its first ``steer_at``
    event; the steered response, once its successor has ended."""
    tool = {"type": "mcp", "server_label": "calc", "server_url": mcp, "require_approval": "never"}
    with connect(ws_url(server)) as socket:
        socket.send(json.dumps({"type": "response.create", "model": model, "input": "Wait 1 seconds for the answer",
                                "tools": [tool], "tool_choice": {"type": "mcp", "server_label": "calc",
                                                                 "name": "slow_answer"}}))  # fmt: skip
        messages: list[dict[str, Any]] = []
        steered = False
        while len([m for m in messages if m["type"] in TERMINAL]) < 2:
            messages.append(json.loads(socket.recv(timeout=60)))
            if messages[-1]["type"] == steer_at and not steered:
                target = messages[0]["response"]["id"]
                socket.send(json.dumps({"type": "response.steer", "previous_response_id": target, "input": STEER}))
                steered = True
    first, _second = check_steered(messages)
    return first


def test_a_steer_lets_the_server_call_running_finish(server: LiveServer, mcp: str) -> None:
    first = steer_a_slow_mcp_call(server, mcp, "sim", steer_at="response.mcp_call_arguments.done")  # running now
    (call,) = [item for item in first["output"] if item["type"] == "mcp_call"]
    assert call["status"] == "completed" and call["output"] == "finally"  # finished, not cut
    assert first["output"][-1]["type"] == "mcp_call"  # and the model was not asked again


def test_a_steer_while_the_model_writes_a_call_ends_it_incomplete(server: LiveServer, mcp: str) -> None:
    first = steer_a_slow_mcp_call(server, mcp, "slowpoke", steer_at="response.mcp_call_arguments.delta")
    (call,) = [item for item in first["output"] if item["type"] == "mcp_call"]
    assert call["status"] == "incomplete" and call.get("output") is None  # cut while written: never run


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
    usage = response["usage"]  # the cut turn counted: what it read, and what it wrote before the cut
    assert usage is not None and usage["input_tokens"] > 0 and usage["output_tokens"] >= 1, usage
    return response


def test_an_interrupted_response_drops_its_partial_item_and_the_socket_goes_on(server: LiveServer) -> None:
    client = openai.OpenAI(base_url=server.v1, api_key="-")
    with connect(ws_url(server)) as socket:
        response = check_interrupted(interrupt_mid_text(socket, model="slowpoke", input=LONG))
        assert response["output"] == []
        read = client.responses.input_tokens.count(model="slowpoke", input=LONG)
        assert response["usage"]["input_tokens"] == read.input_tokens  # as the backend counts the request
        stored = client.responses.retrieve(response["id"])
        assert stored.usage is not None and stored.usage.input_tokens == read.input_tokens
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


def test_an_interrupt_stops_a_response_in_its_lane_and_the_other_lane_runs_on(server: LiveServer) -> None:
    with connect(ws_url(server)) as socket:
        socket.send(json.dumps({"type": "response.create", "model": "slowpoke", "input": LONG, "stream_id": "a"}))
        socket.send(json.dumps({"type": "response.create", "model": "slowpoke", "input": "Say hi.", "stream_id": "b"}))
        by_lane: dict[str, list[dict[str, Any]]] = {"a": [], "b": []}
        interrupted = False
        while not all(lane and lane[-1]["type"] in TERMINAL for lane in by_lane.values()):
            message = json.loads(socket.recv(timeout=120))
            by_lane[message["stream_id"]].append(message)
            if message["stream_id"] == "a" and message["type"] == "response.output_text.delta" and not interrupted:
                target = by_lane["a"][0]["response"]["id"]
                socket.send(json.dumps({"type": "response.interrupt", "response_id": target,
                                        "mode": "discard_partial_items"}))  # fmt: skip
                interrupted = True
    check_interrupted(by_lane["a"])  # its events, each with its lane's stream_id
    assert by_lane["b"][-1]["type"] == "response.completed"
