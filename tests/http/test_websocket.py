"""WebSocket mode (``ws://…/v1/responses``) on a live server: the openai SDK's own WebSocket client
and a plain ``websockets`` client, every message checked against the Open Responses schemas."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import openai
import pytest
from websockets.exceptions import ConnectionClosed, InvalidStatus
from websockets.sync.client import ClientConnection, connect

from responsa.backends.llama_cpp import DEFAULT_MODEL_NAME
from responsa.config import ApiKey, Settings
from tests.backends.test_chat_completions import start_rig
from tests.conftest import LiveServer, serve, sqlite_server
from tests.spec import event_errors, spec

TERMINAL = {"response.completed", "response.incomplete", "response.failed", "error"}


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveServer]:
    yield from sqlite_server(tmp_path_factory, "websocket")


def ws_url(server: LiveServer, prefix: str = "/v1") -> str:
    return server.url.replace("http://", "ws://") + f"{prefix}/responses"


def turn(socket: ClientConnection, **body: Any) -> list[dict[str, Any]]:
    """Send one ``response.create`` and read messages up to its terminal one."""
    socket.send(json.dumps({"type": "response.create", **body}))
    messages = []
    while True:
        message = json.loads(socket.recv(timeout=60))
        messages.append(message)
        if message["type"] in TERMINAL:
            return messages


def assert_error(message: dict[str, Any], status: int, code: str) -> None:
    assert message["type"] == "error" and message["status"] == status, message
    assert message["error"]["code"] == code
    assert spec().validate(message, "WebSocketErrorEvent") == []


@pytest.mark.filterwarnings("ignore:connect\\(\\) must be used as a context manager:DeprecationWarning")
def test_sdk_websocket_runs_sequential_responses_and_continues_store_false(server: LiveServer) -> None:
    with openai.OpenAI(base_url=server.v1, api_key="x", max_retries=0) as client:
        with client.beta.responses.connect() as connection:
            connection.send({"type": "response.create", "model": "sim", "input": "My name is Ada.", "store": False})  # type: ignore[arg-type,typeddict-item]
            first = [event for event in _until_done(connection)]
            connection.send({"type": "response.create", "model": "sim", "input": "What is my name?",  # type: ignore[arg-type,typeddict-item]
                             "store": False, "previous_response_id": first[-1].response.id})  # fmt: skip
            second = [event for event in _until_done(connection)]
            connection.send({"type": "response.create", "model": "sim", "input": "What is my name?", "store": False})  # type: ignore[arg-type,typeddict-item]
            fresh = [event for event in _until_done(connection)][-1].response
    for events in (first, second):
        assert events[0].type == "response.created" and events[-1].type == "response.completed"
        assert [event.sequence_number for event in events] == list(range(len(events)))
        for event in events:
            assert event_errors(event.to_dict(warnings=False)) == []
    assert second[-1].response.previous_response_id == first[-1].response.id
    # The model read the cached first turn: more input than the same question on its own.
    assert second[-1].response.usage.input_tokens > fresh.usage.input_tokens + 5


def _until_done(connection: Any) -> Iterator[Any]:
    for event in connection:
        yield event
        if event.type in TERMINAL:
            return


@pytest.mark.parametrize("prefix", ["/v1", "", "/openai/v1", "/v3"])
def test_every_route_prefix_takes_a_socket(server: LiveServer, prefix: str) -> None:
    with connect(ws_url(server, prefix)) as socket:
        messages = turn(socket, model="sim", input="hello")
    assert messages[-1]["type"] == "response.completed"


def test_unknown_previous_response_is_an_error_message_and_the_socket_stays_open(server: LiveServer) -> None:
    with connect(ws_url(server)) as socket:
        (error,) = turn(socket, model="sim", input="x", previous_response_id="resp_missing")
        assert_error(error, 404, "previous_response_not_found")
        assert error["error"]["param"] == "previous_response_id"
        assert turn(socket, model="sim", input="still here?")[-1]["type"] == "response.completed"


def test_fields_a_socket_cannot_honour_and_other_messages_are_refused(server: LiveServer) -> None:
    with connect(ws_url(server)) as socket:
        (error,) = turn(socket, model="sim", input="x", background=True)
        assert_error(error, 400, "unsupported_parameter")
        assert error["error"]["param"] == "background"
        (error,) = turn(socket, model="sim", input="x", stream=False)
        assert_error(error, 400, "invalid_value")
        assert error["error"]["param"] == "stream" and error["status_code"] == 400
        (error,) = turn(socket, model="sim", input="x", multi_agent={"agents": [{"name": "helper"}]})
        assert_error(error, 400, "missing_required_parameter")  # an earlier beta's shape: not this one
        assert error["error"]["param"] == "multi_agent.enabled"
        socket.send(json.dumps({"type": "session.update"}))
        assert_error(json.loads(socket.recv(timeout=10)), 400, "invalid_value")
        socket.send("not json")
        assert_error(json.loads(socket.recv(timeout=10)), 400, "invalid_json")


def test_failed_continuation_evicts_the_cached_response(server: LiveServer) -> None:
    with connect(ws_url(server)) as socket:
        first = turn(socket, model="sim", input="Remember 42.", store=False)[-1]["response"]
        (error,) = turn(socket, model="sim", input="x", store=False, previous_response_id=first["id"],
                        tool_choice="required")  # fmt: skip
        assert_error(error, 400, "invalid_request_error")
        (gone,) = turn(socket, model="sim", input="x", store=False, previous_response_id=first["id"])
        assert_error(gone, 404, "previous_response_not_found")


def test_stored_responses_continue_across_connections(server: LiveServer) -> None:
    with connect(ws_url(server)) as socket:
        first = turn(socket, model="sim", input="My name is Grace.")[-1]["response"]
    with connect(ws_url(server)) as socket:
        second = turn(socket, model="sim", input="What is my name?", previous_response_id=first["id"])[-1]
        fresh = turn(socket, model="sim", input="What is my name?")[-1]
    assert second["type"] == "response.completed"
    assert second["response"]["usage"]["input_tokens"] > fresh["response"]["usage"]["input_tokens"] + 5


def test_embedded_model_answers_over_a_socket(server: LiveServer) -> None:
    with connect(ws_url(server)) as socket:
        messages = turn(socket, model=DEFAULT_MODEL_NAME, input="Say hi.", max_output_tokens=8)
    assert messages[-1]["type"] in ("response.completed", "response.incomplete")
    assert any(message["type"] == "response.output_text.delta" for message in messages)
    for message in messages:
        assert event_errors(message) == []


def test_upstream_answers_over_a_socket(tmp_path: Path) -> None:
    for rig in start_rig(tmp_path):
        with connect(ws_url(rig.server)) as socket:
            messages = turn(socket, model="up-model", input="hi")
        assert messages[-1]["type"] == "response.completed"
        assert rig.first.requests[-1]["messages"][-1]["content"] == "hi"


def test_api_key_comes_from_the_handshake_and_tenants_stay_apart(tmp_path: Path) -> None:
    keys = (ApiKey("key-a", "a"), ApiKey("key-b", "b"))
    with serve(Settings(db_url=f"sqlite:///{tmp_path / 'k.db'}", api_keys=keys)) as live:
        with pytest.raises(InvalidStatus) as refused:
            connect(ws_url(live))
        assert refused.value.response.status_code == 401
        with connect(ws_url(live), additional_headers={"Authorization": "Bearer key-a"}) as socket:
            mine = turn(socket, model="sim", input="hello")[-1]["response"]
        with connect(ws_url(live), additional_headers={"Authorization": "Bearer key-b"}) as socket:
            (error,) = turn(socket, model="sim", input="x", previous_response_id=mine["id"])
        assert_error(error, 404, "previous_response_not_found")


def test_rate_limits_apply_to_each_response_create(tmp_path: Path) -> None:
    keys = (ApiKey("key-a", "a", requests_per_minute=1),)
    with serve(Settings(db_url=f"sqlite:///{tmp_path / 'r.db'}", api_keys=keys)) as live:
        with connect(ws_url(live), additional_headers={"Authorization": "Bearer key-a"}) as socket:
            assert turn(socket, model="sim", input="one")[-1]["type"] == "response.completed"
            (error,) = turn(socket, model="sim", input="two")
    assert_error(error, 429, "rate_limit_exceeded")


def test_connection_age_limit_ends_the_socket(tmp_path: Path) -> None:
    with serve(Settings(db_url=f"sqlite:///{tmp_path / 'a.db'}", websocket_max_age_secs=1.0)) as live:
        with connect(ws_url(live)) as socket:
            assert turn(socket, model="sim", input="quick")[-1]["type"] == "response.completed"
            error = json.loads(socket.recv(timeout=10))
            assert_error(error, 400, "websocket_connection_limit_reached")
            with pytest.raises(ConnectionClosed):
                socket.recv(timeout=10)
