"""Every client event of the openai package's beta WebSocket (``BetaResponsesClientEventParam``) has
an answer of its own here, read from the union itself: a new event in a new SDK release fails this
test until it is served or refused by name (never the generic ``invalid_value`` of an unknown type)."""

from __future__ import annotations

import json
import typing
from collections.abc import Iterator
from typing import Any

import pytest
from openai.types.beta import beta_responses_client_event_param as client_events
from websockets.sync.client import connect

from tests.conftest import LiveServer, sqlite_server
from tests.http.test_websocket import turn, ws_url

ANSWERS: dict[str, tuple[dict[str, Any], str]] = {
    "response.create": ({"model": "sim", "input": "Hi."}, "response.created"),
    "response.steer": ({"previous_response_id": "resp_gone", "input": "Stop."}, "response.steer.failed"),
    "response.inject": ({"response_id": "resp_gone", "input": [{"role": "user", "content": "More."}]},
                        "response.inject.failed"),
}  # fmt: skip
"""Each client event type: a body, and the first message it gets back."""


def client_event_types() -> set[str]:
    types = set()
    for member in typing.get_args(client_events.BetaResponsesClientEventParam):
        types.update(typing.get_args(typing.get_type_hints(member)["type"]))  # its Literal's value
    return types


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveServer]:
    yield from sqlite_server(tmp_path_factory, "client-events")


def test_every_client_event_of_the_sdk_has_an_answer(server: LiveServer) -> None:
    assert client_event_types() == set(ANSWERS)
    with connect(ws_url(server)) as socket:
        for kind, (body, answer) in ANSWERS.items():
            socket.send(json.dumps({"type": kind, **body}))
            assert json.loads(socket.recv(timeout=30))["type"] == answer, kind
            while kind == "response.create" and json.loads(socket.recv(timeout=30))["type"] != "response.completed":
                pass


def test_an_inject_fails_with_its_input_and_why(server: LiveServer) -> None:
    given = [{"type": "function_call_output", "call_id": "call_1", "output": "42"}]
    with connect(ws_url(server)) as socket:
        socket.send(json.dumps({"type": "response.inject", "response_id": "resp_elsewhere", "input": given}))
        failed = json.loads(socket.recv(timeout=10))
        assert failed["response_id"] == "resp_elsewhere" and failed["input"] == given
        assert failed["error"]["code"] == "response_not_found"
        done = turn(socket, model="sim", input="Hi.")[-1]["response"]
        socket.send(json.dumps({"type": "response.inject", "response_id": done["id"], "input": given}))
        assert json.loads(socket.recv(timeout=10))["error"]["code"] == "response_already_completed"
