"""WebSocket mode as OpenAI serves it to the clients people run: Codex's frames (a ``generate: false``
prewarm with ``stream: true`` and fields this server does not know, then turns continuing it with
``store: false``), the Agents SDK's ``stream: true``, compaction v2 on a socket, and error events with
the ``status_code`` older Codex builds read."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest
from websockets.sync.client import connect

from tests.conftest import LiveServer, sqlite_server
from tests.http.test_websocket import assert_error, turn, ws_url
from tests.spec import openai_event

CODEX_TOOLS: list[dict[str, Any]] = [
    {"type": "function", "name": "exec_command", "description": "Runs a shell command.", "strict": False,
     "parameters": {"type": "object", "properties": {"cmd": {"type": "string"}}, "required": ["cmd"]}},
    {"type": "custom", "name": "apply_patch", "description": "Edits files.",
     "format": {"type": "grammar", "syntax": "lark", "definition": 'start: "*** Begin Patch" /(.|\\n)*/'}},
]  # fmt: skip


def codex_frame(**fields: Any) -> dict[str, Any]:
    """A ``response.create`` as Codex 0.169 sends it over its WebSocket (see reference/wire-2026.md)."""
    return {"model": "sim", "stream": True, "tools": CODEX_TOOLS, "tool_choice": "auto", "parallel_tool_calls": True,
            "reasoning": {"summary": "auto"}, "store": False, "include": ["reasoning.encrypted_content"],
            "prompt_cache_key": "thread-1", "client_metadata": {"x-codex-turn-metadata": "{}"},
            "codex_future_field": {"anything": 1}, **fields}  # fmt: skip


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveServer]:
    yield from sqlite_server(tmp_path_factory, "websocket-clients")


def test_a_prewarm_makes_the_response_without_the_model_and_the_next_turn_continues_it(server: LiveServer) -> None:
    history = [{"type": "message", "role": "user", "content": [{"type": "input_text", "text": "My name is Ada."}]}]
    with connect(ws_url(server)) as socket:
        prewarm = turn(socket, **codex_frame(input=history, generate=False))
        first, last = prewarm[0], prewarm[-1]
        assert first["type"] == "response.created" and last["type"] == "response.completed", prewarm
        assert not [message for message in prewarm if message["type"].startswith("response.output_item")]
        assert last["response"]["output"] == [] and last["response"]["usage"]["output_tokens"] == 0
        assert all(openai_event(message).type == message["type"] for message in prewarm)

        question = [
            {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "What is my name?"}]}
        ]
        answered = turn(socket, **codex_frame(input=question, previous_response_id=last["response"]["id"]))
        alone = turn(socket, **codex_frame(input=question))
    response = answered[-1]["response"]
    assert answered[-1]["type"] == "response.completed" and response["output"][-1]["type"] == "message"
    assert response["previous_response_id"] == last["response"]["id"]
    # The prewarm's input reached the model: more input than the question alone.
    assert response["usage"]["input_tokens"] > alone[-1]["response"]["usage"]["input_tokens"] + 3


def test_a_prewarm_is_stored_when_asked_and_continues_on_another_connection(server: LiveServer) -> None:
    with connect(ws_url(server)) as socket:
        prewarm = turn(socket, **codex_frame(input="Remember 42.", generate=False, store=True))[-1]["response"]
    with connect(ws_url(server)) as socket:
        follow = turn(socket, **codex_frame(input="What number?", previous_response_id=prewarm["id"]))[-1]
    assert follow["type"] == "response.completed"


def test_a_continuation_of_an_unknown_store_false_response_says_previous_response_not_found(server: LiveServer) -> None:
    """Codex resends its whole history on this error: it must come for a chain this socket no longer holds."""
    with connect(ws_url(server)) as socket:
        first = turn(socket, **codex_frame(input="One.", generate=False))[-1]["response"]
    with connect(ws_url(server)) as socket:
        (error,) = turn(socket, **codex_frame(input="Two.", previous_response_id=first["id"]))
        assert_error(error, 404, "previous_response_not_found")
        assert error["status_code"] == 404
        assert turn(socket, **codex_frame(input="One. Two."))[-1]["type"] == "response.completed"  # resent whole


def test_generate_must_be_a_boolean(server: LiveServer) -> None:
    with connect(ws_url(server)) as socket:
        (error,) = turn(socket, **codex_frame(input="x", generate="no"))
    assert_error(error, 400, "invalid_type")
    assert error["error"]["param"] == "generate"


def test_compaction_v2_on_a_socket_answers_exactly_one_compaction_item(server: LiveServer) -> None:
    history: list[Any] = [
        {"role": "user", "content": "We ship on Tuesday; the budget is 4,000 euros."},
        {"role": "assistant", "content": "Noted: Tuesday, 4,000 euros."},
        {"type": "compaction_trigger", "id": "ct_1"},
    ]
    with connect(ws_url(server)) as socket:
        messages = turn(socket, **codex_frame(input=history))
        done = [m["item"] for m in messages if m["type"] == "response.output_item.done"]
        assert [item["type"] for item in done] == ["compaction"], messages
        assert [m["type"] for m in messages].count("response.compaction.compacting") == 1
        assert messages[-1]["type"] == "response.completed" and messages[-1]["response"]["output"] == done
        # Codex's next window: its user messages and the compaction item, continued on the same socket.
        window = [history[0], done[0], {"role": "user", "content": "When do we ship?"}]
        follow = turn(socket, **codex_frame(input=window))
    assert follow[-1]["type"] == "response.completed"
    assert json.dumps(follow[-1]["response"]["output"]).count("compaction") == 0
