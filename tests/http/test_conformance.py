"""Every response, stream event and error body validates against the Open Responses OpenAPI document,
on each backend: a plain turn, a tool-calling turn, a structured-output turn, a reasoning turn
(simulator) and errors, as JSON and as SSE."""

from __future__ import annotations

import base64
import json
import time
from collections.abc import Iterator
from contextlib import ExitStack
from dataclasses import dataclass
from typing import Any

import httpx
import pytest

from responsa.backends.llama_cpp import DEFAULT_MODEL_NAME
from responsa.config import Settings, UpstreamConfig
from tests.backends.mock_upstream import MockUpstream, Stream, text_chunks
from tests.conftest import serve, serve_app
from tests.http.test_streaming import WEATHER_TOOL, parse_frames
from tests.http.test_vector_stores import make_pdf
from tests.spec import error_body_errors, event_errors, hosted_call_errors, response_errors

CITY_SCHEMA = {
    "type": "object",
    "properties": {"city": {"type": "string"}, "population": {"type": "integer"}},
    "required": ["city", "population"],
    "additionalProperties": False,
}


@dataclass
class Target:
    """A live server and the model of one backend on it; ``upstream`` is set for the upstream backend."""

    http: httpx.Client
    model: str
    upstream: MockUpstream | None = None

    def script_tool_call(self) -> None:
        if self.upstream is not None:
            call = {
                "index": 0,
                "id": "call_1",
                "function": {"name": "get_weather", "arguments": '{"location":"Paris"}'},
            }
            chunks = [{"choices": [{"index": 0, "delta": {"tool_calls": [call]}}]},
                      {"choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}]},
                      {"choices": [], "usage": {"prompt_tokens": 9, "completion_tokens": 5}}]  # fmt: skip
            self.upstream.script.append(Stream(chunks))

    def script_json(self) -> None:
        if self.upstream is not None:
            self.upstream.script.append(Stream(text_chunks('{"city": "Paris", ', '"population": 2100000}')))


@pytest.fixture(scope="module", params=["simulator", "embedded", "upstream"])
def target(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Target]:
    db = f"sqlite:///{tmp_path_factory.mktemp('conformance') / 'r.db'}"
    with ExitStack() as stack:
        upstream = None
        if request.param == "upstream":
            upstream = MockUpstream()
            url = f"{stack.enter_context(serve_app(upstream.app)).url}/v1"
            settings = Settings(db_url=db, models=(UpstreamConfig(name="up-model", urls=(url,)),), embedded=False)
            model = "up-model"
        else:
            settings = Settings(db_url=db, embedded=request.param == "embedded")
            model = "sim" if request.param == "simulator" else DEFAULT_MODEL_NAME
        server = stack.enter_context(serve(settings))
        http = stack.enter_context(httpx.Client(base_url=server.v1, timeout=60))
        yield Target(http, model, upstream)


def _check(target: Target, body: dict[str, Any]) -> dict[str, Any]:
    """Create ``body`` as JSON and as a stream; every object and event must validate. Returns the JSON reply."""
    reply = target.http.post("/responses", json=body)
    assert reply.status_code == 200, reply.text
    response = reply.json()
    assert response_errors(response) == []
    assert response_errors(target.http.get(f"/responses/{response['id']}").json()) == []
    return response


def _check_stream(target: Target, body: dict[str, Any]) -> list[dict[str, Any]]:
    reply = target.http.post("/responses", json={**body, "stream": True})
    assert reply.status_code == 200, reply.text
    events = parse_frames(reply.content)
    assert [error for event in events for error in event_errors(event)] == []
    return events


def _plain(target: Target) -> dict[str, Any]:
    return {"model": target.model, "input": "Say hello.", "max_output_tokens": 16}


def test_a_plain_turn_validates(target: Target) -> None:
    response = _check(target, _plain(target))
    assert response["output"][-1]["type"] == "message"
    assert response["output"][-1]["phase"] == "final_answer"
    events = _check_stream(target, _plain(target))
    assert events[-1]["type"] in ("response.completed", "response.incomplete")


def test_a_tool_calling_turn_validates_and_echoes_the_tool(target: Target) -> None:
    # A forced call on the embedded model is sampled (temperature 1) under the schema's grammar: bounded, so
    # that a string argument that never closes cannot take the whole context window.
    body = {"model": target.model, "input": "Weather in Paris?", "tools": [WEATHER_TOOL], "tool_choice": "required",
            "max_output_tokens": 200}  # fmt: skip
    target.script_tool_call()
    response = _check(target, body)
    assert [item["type"] for item in response["output"]][-1] == "function_call"
    assert response["tools"] == [{**WEATHER_TOOL, "strict": False}]
    target.script_tool_call()
    events = _check_stream(target, body)
    assert "response.function_call_arguments.done" in [event["type"] for event in events]


def test_a_structured_output_turn_validates_and_echoes_schema(target: Target) -> None:
    fmt = {"type": "json_schema", "name": "city", "schema": CITY_SCHEMA, "strict": True}
    body = {"model": target.model, "input": "A city as JSON.", "text": {"format": fmt}, "max_output_tokens": 60}
    target.script_json()
    response = _check(target, body)
    assert response["text"]["format"] == {**fmt, "description": None}
    if response["status"] == "completed":
        assert set(json.loads(response["output_text"])) == {"city", "population"}
    target.script_json()
    _check_stream(target, body)


def test_errors_validate(target: Target) -> None:
    for body in (
        {"input": "no model"},
        {"model": target.model, "input": "x", "temperature": 9},
        {"model": "no-such-model", "input": "x"},
        {"model": target.model, "previous_response_id": "resp_missing", "input": "x"},
    ):
        reply = target.http.post("/responses", json=body)
        assert 400 <= reply.status_code < 500
        assert error_body_errors(reply.json()) == []


def test_a_reasoning_turn_validates_on_the_simulator(target: Target) -> None:
    if target.model != "sim":
        pytest.skip("only the simulator has a reasoning model among the three")
    body = {"model": "o4-mini", "input": "What is 15 * 37?", "reasoning": {"effort": "low", "summary": "auto"}}
    response = _check(target, body)
    assert response["reasoning"] == {"effort": "low", "summary": "auto"}
    assert response["output"][0]["type"] == "reasoning" and response["output"][0]["summary"]
    kinds = [event["type"] for event in _check_stream(target, body)]
    assert "response.reasoning_summary_text.delta" in kinds


def test_a_failed_stream_validates_on_the_simulator(target: Target) -> None:
    if target.model != "sim":
        pytest.skip("faults are injected by the simulator")
    reply = target.http.post(
        "/responses",
        json={"model": "sim", "input": "Say hello.", "stream": True},
        headers={"x-responsa-fault": "mid_stream"},
    )
    events = parse_frames(reply.content)
    assert events[-1]["type"] == "response.failed"
    assert [error for event in events for error in event_errors(event)] == []


def test_assistant_phase_is_accepted_and_kept(target: Target) -> None:
    history = [
        {"type": "message", "role": "assistant", "phase": "commentary", "content": "Checking the number."},
        {"type": "message", "role": "assistant", "phase": "final_answer", "content": "The number is four."},
        {"type": "message", "role": "user", "content": "Repeat only the number."},
    ]
    target.script_json()
    response = _check(target, {"model": target.model, "input": history, "max_output_tokens": 8})
    items = target.http.get(f"/responses/{response['id']}/input_items", params={"order": "asc"}).json()["data"]
    assert [item.get("phase") for item in items] == ["commentary", "final_answer", None]


def test_newest_request_values_are_accepted(target: Target) -> None:
    body = {**_plain(target), "context_management": [{"type": "compaction", "compact_threshold": 100000}],
            "presence_penalty": 0.5, "frequency_penalty": 0.25}  # fmt: skip
    response = _check(target, body)
    assert (response["presence_penalty"], response["frequency_penalty"]) == (0.5, 0.25)


def test_reasoning_effort_max_is_a_known_value(target: Target) -> None:
    reply = target.http.post("/responses", json={**_plain(target), "reasoning": {"effort": "max"}})
    assert reply.status_code == 200, reply.text
    assert reply.json()["reasoning"]["effort"] == "max"


def test_a_function_call_round_trip_validates(target: Target) -> None:
    """The upstream suite's ``function-call-roundtrip``: a call, its output sent back, an answer."""
    target.script_tool_call()
    body = {"model": target.model, "input": "Weather in Paris?", "tools": [WEATHER_TOOL], "tool_choice": "required",
            "max_output_tokens": 200}  # fmt: skip
    first = _check(target, body)
    call = first["output"][-1]
    assert call["type"] == "function_call"
    if target.upstream is not None:
        target.upstream.script.append(Stream(text_chunks("It is sunny in Paris.")))
    output = {"type": "function_call_output", "call_id": call["call_id"], "output": "Sunny, 21 C"}
    answered = _check(target, {"model": target.model, "previous_response_id": first["id"], "tools": [WEATHER_TOOL],
                               "input": [output], "max_output_tokens": 32})  # fmt: skip
    assert answered["output"][-1]["type"] == "message" and answered["previous_response_id"] == first["id"]
    if target.upstream is not None:
        sent = target.upstream.requests[-1]["messages"][-1]
        assert sent == {"role": "tool", "tool_call_id": call["call_id"], "content": "Sunny, 21 C"}


def test_a_file_input_reaches_the_model(target: Target) -> None:
    """The upstream suite's ``file-input`` (a base64 PDF), and more than it checks: the file's text
    reached the model (the upstream's request, the simulator's count)."""
    pdf = base64.b64encode(make_pdf("The harbour master keeps the tide tables.")).decode()
    file = {"type": "input_file", "filename": "tides.pdf", "file_data": f"data:application/pdf;base64,{pdf}"}
    message = {"role": "user", "content": [{"type": "input_text", "text": "What does the file say?"}, file]}
    response = _check(target, {"model": target.model, "input": [message], "max_output_tokens": 16})
    assert response["output"][-1]["type"] == "message"
    if target.upstream is not None:
        assert "harbour master" in str(target.upstream.requests[-1]["messages"][-1]["content"])
    counted = target.http.post("/responses/input_tokens", json={"model": target.model, "input": [message]})
    bare = target.http.post("/responses/input_tokens", json={"model": target.model, "input": "What does the file say?"})
    assert counted.json()["input_tokens"] > bare.json()["input_tokens"]


def test_previous_response_id_carries_the_context(target: Target) -> None:
    """The upstream suite's ``previous-response-id``: the second turn reads the first."""
    first = _check(target, {"model": target.model, "input": "My favourite colour is teal.", "max_output_tokens": 16})
    second = _check(target, {"model": target.model, "input": "What is my favourite colour?",
                             "previous_response_id": first["id"], "max_output_tokens": 16})  # fmt: skip
    assert second["previous_response_id"] == first["id"]
    if target.upstream is not None:
        sent = [str(message["content"]) for message in target.upstream.requests[-1]["messages"]]
        assert "My favourite colour is teal." in sent and sent[-1] == "What is my favourite colour?"
    listed = target.http.get(f"/responses/{second['id']}/input_items").json()["data"]
    assert [item["content"][0]["text"] for item in listed if item["type"] == "message"] == [
        "What is my favourite colour?"
    ]


def test_a_forced_file_search_validates(target: Target) -> None:
    """The upstream suite's ``file-search``, as it sends it: a search of a vector store forced by
    ``tool_choice``, its results included; the server runs it for every backend."""
    uploaded = target.http.post("/files", files={"file": ("tides.txt", b"The moon's gravity makes the tides.")},
                                data={"purpose": "assistants"}).json()  # fmt: skip
    store = target.http.post("/vector_stores", json={"name": "suite", "file_ids": [uploaded["id"]]}).json()
    while target.http.get(f"/vector_stores/{store['id']}").json()["file_counts"]["in_progress"]:
        time.sleep(0.05)
    if target.upstream is not None:
        search = {"index": 0, "id": "call_0", "type": "function",
                  "function": {"name": "file_search", "arguments": '{"query": "tides"}'}}  # fmt: skip
        target.upstream.script.append(Stream([{"choices": [{"index": 0, "delta": {"tool_calls": [search]}}]},
                                              {"choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}]}]))  # fmt: skip
        target.upstream.script.append(Stream(text_chunks("The moon makes the tides.")))
    body = {"model": target.model, "input": "Search the configured vector store for relevant content and summarize one result.",
            "tools": [{"type": "file_search", "vector_store_ids": [store["id"]]}], "tool_choice": {"type": "file_search"},
            "include": ["file_search_call.results"], "max_output_tokens": 64}  # fmt: skip
    if target.model == DEFAULT_MODEL_NAME:  # sampled at temperature 1, its query may run past the suite's 64 tokens
        body["temperature"] = 0
    reply = target.http.post("/responses", json=body)
    assert reply.status_code == 200, reply.text
    response = reply.json()
    [call] = [item for item in response["output"] if item["type"] == "file_search_call"]
    assert hosted_call_errors(response, call) == []
    assert call["status"] == "completed" and isinstance(call["results"], list)  # included, as asked
    if target.upstream is not None:  # the model's query ("tides") found the file
        assert "tides" in call["results"][0]["text"] and response["output"][-1]["type"] == "message"
