"""Clients written for the seed servers (OpenVINO Model Server, mlxcel), unchanged, against responsa:
their tool and format dialects, their extra parameters, and the answers they expect."""

from __future__ import annotations

import json
import math
from collections.abc import Iterator
from typing import Any

import httpx
import openai
import pytest

from tests.conftest import LiveServer, sqlite_server
from tests.http.test_streaming import parse_frames

EMBEDDED = "smollm2-135m-instruct"
CHAT_WEATHER = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "description": "Get current weather for a city",
        "parameters": {"type": "object", "properties": {"location": {"type": "string"}}, "required": ["location"]},
    },
}


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveServer]:
    yield from sqlite_server(tmp_path_factory, "seed-clients")


@pytest.fixture
def ovms(server: LiveServer) -> Iterator[openai.OpenAI]:
    """The client as OpenVINO's docs set it up: base URL ``…/v3``."""
    with openai.OpenAI(base_url=f"{server.url}/v3", api_key="unused", max_retries=0) as sdk:
        yield sdk


def test_chat_shaped_function_tools_and_choice_mean_the_flat_ones(ovms: openai.OpenAI) -> None:
    reply = ovms.responses.create(
        model="sim",
        input="What's the weather in Oslo?",
        tools=[CHAT_WEATHER],  # type: ignore[list-item]
        tool_choice={"type": "function", "function": {"name": "get_weather"}},  # type: ignore[typeddict-item]
    )
    call = reply.output[0]
    assert call.type == "function_call" and call.name == "get_weather"
    assert json.loads(call.arguments)["location"] == "Oslo"
    tool = reply.tools[0].model_dump()
    assert tool["name"] == "get_weather" and "function" not in tool  # echoed in the flat form
    assert tool["parameters"] == CHAT_WEATHER["function"]["parameters"]  # type: ignore[index]
    assert reply.tool_choice.model_dump() == {"type": "function", "name": "get_weather"}


def test_a_chat_shaped_choice_naming_a_missing_tool_is_a_400(ovms: openai.OpenAI) -> None:
    with pytest.raises(openai.BadRequestError) as caught:
        ovms.responses.create(
            model="sim", input="hi", tools=[CHAT_WEATHER],  # type: ignore[list-item]
            tool_choice={"type": "function", "function": {"name": "nope"}},  # type: ignore[typeddict-item]
        )  # fmt: skip
    assert caught.value.body["param"] == "tool_choice"  # type: ignore[index]


SCHEMA = {
    "type": "object",
    "properties": {"city": {"type": "string"}, "population": {"type": "integer"}},
    "required": ["city", "population"],
    "additionalProperties": False,
}


@pytest.mark.parametrize("model", ["sim", EMBEDDED])
def test_response_format_json_schema_holds_the_output_and_echoes_as_text_format(
    ovms: openai.OpenAI, model: str
) -> None:
    fmt = {"type": "json_schema", "json_schema": {"name": "city", "schema": SCHEMA, "strict": True}}
    reply = ovms.responses.create(
        model=model, input="Name a big city and its population.", max_output_tokens=60, temperature=0,
        extra_body={"response_format": fmt},
    )  # fmt: skip
    assert reply.text.format.type == "json_schema"
    echoed = reply.text.format.model_dump(by_alias=True)
    assert echoed["name"] == "city" and echoed["schema"] == SCHEMA and echoed["strict"] is True
    if reply.status == "completed":
        value = json.loads(reply.output_text)
        assert set(value) == {"city", "population"} and isinstance(value["population"], int)
    else:  # the 135M model may write a long name; what it wrote is still held to the schema's grammar
        assert reply.incomplete_details and reply.incomplete_details.reason == "max_output_tokens"
        assert reply.output_text.startswith('{"city"')


@pytest.mark.parametrize("model", ["sim", EMBEDDED])
def test_response_format_json_object(ovms: openai.OpenAI, model: str) -> None:
    reply = ovms.responses.create(
        model=model, input="Give me a JSON object with a greeting.", max_output_tokens=40, temperature=0,
        extra_body={"response_format": {"type": "json_object"}},
    )  # fmt: skip
    assert reply.text.format.type == "json_object"
    assert reply.output_text.lstrip().startswith("{")
    if reply.status == "completed":
        assert isinstance(json.loads(reply.output_text), dict)


def test_response_format_and_text_format_together_are_a_400(http: httpx.Client) -> None:
    body = {"model": "sim", "input": "hi", "response_format": {"type": "json_object"},
            "text": {"format": {"type": "text"}}}  # fmt: skip
    reply = http.post("/v3/responses", json=body)
    assert reply.status_code == 400
    assert reply.json()["error"]["param"] == "response_format"


@pytest.fixture
def http(server: LiveServer) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=server.url, timeout=60) as raw:
        yield raw


@pytest.mark.parametrize(
    ("extra", "param"),
    [({"n": 2}, "n"), ({"best_of": 4}, "best_of"), ({"length_penalty": 0.5}, "length_penalty"),
     ({"seed": -1}, "seed"), ({"seed": 2**32}, "seed"), ({"top_p": 0}, "top_p"), ({"top_p": 1.5}, "top_p"),
     ({"min_p": 1.0}, "min_p"), ({"min_p": -0.1}, "min_p")],
)  # fmt: skip
def test_parameters_that_cannot_be_honoured_are_a_400_naming_them(
    http: httpx.Client, extra: dict[str, Any], param: str
) -> None:
    reply = http.post("/v3/responses", json={"model": "sim", "input": "hi", **extra})
    assert reply.status_code == 400, reply.text
    error = reply.json()["error"]
    assert error["param"] == param and error["type"] == "invalid_request_error"


def test_their_honoured_values_are_accepted(http: httpx.Client) -> None:
    body = {"model": "sim", "input": "Reply with: ok", "n": 1, "best_of": 1, "length_penalty": 1.0,
            "seed": 4294967295, "top_p": 1, "min_p": 0}  # fmt: skip
    reply = http.post("/v3/responses", json=body)
    assert reply.status_code == 200 and reply.json()["output"][0]["content"][0]["text"] == "ok"


def _check_logprobs(entries: list[dict[str, Any]], text: str, top: int) -> None:
    assert entries, "no log probabilities"
    assert "".join(entry["token"] for entry in entries) == text
    for entry in entries:
        assert entry["logprob"] <= 0 and bytes(entry["bytes"]).decode(errors="replace") == entry["token"]
        alternatives = entry["top_logprobs"]
        assert len(alternatives) == top
        assert [alt["logprob"] for alt in alternatives] == sorted(
            (alt["logprob"] for alt in alternatives), reverse=True
        )
        assert sum(math.exp(alt["logprob"]) for alt in alternatives) <= 1.0001


@pytest.mark.parametrize("model", ["sim", EMBEDDED])
@pytest.mark.parametrize("ask", [{"logprobs": True}, {"include": ["message.output_text.logprobs"]}])
def test_logprobs_in_json(http: httpx.Client, model: str, ask: dict[str, Any]) -> None:
    body = {"model": model, "input": "Say hello.", "max_output_tokens": 12, "temperature": 0, "top_logprobs": 3, **ask}
    reply = http.post("/v3/responses", json=body).json()
    part = reply["output"][-1]["content"][0]
    _check_logprobs(part["logprobs"], part["text"], 3)
    assert reply["top_logprobs"] == 3


@pytest.mark.parametrize("model", ["sim", EMBEDDED])
def test_logprobs_in_stream_events(http: httpx.Client, model: str) -> None:
    body = {"model": model, "input": "Say hello.", "max_output_tokens": 12, "temperature": 0, "top_logprobs": 2,
            "include": ["message.output_text.logprobs"], "stream": True}  # fmt: skip
    with http.stream("POST", "/v3/responses", json=body) as reply:
        events = parse_frames(reply.read())
    deltas = [event for event in events if event["type"] == "response.output_text.delta"]
    streamed = [entry for event in deltas for entry in event["logprobs"]]
    done = next(event for event in events if event["type"] == "response.output_text.done")
    _check_logprobs(streamed, done["text"], 2)
    assert done["logprobs"] == streamed
    final = events[-1]["response"]["output"][-1]["content"][0]
    assert final["logprobs"] == streamed


def test_no_logprobs_unless_asked(http: httpx.Client) -> None:
    reply = http.post("/v3/responses", json={"model": "sim", "input": "Say hello."}).json()
    assert reply["output"][0]["content"][0]["logprobs"] == []


def test_chat_text_parts_are_read_as_input_text(server: LiveServer) -> None:
    """mlxcel's clients send Chat Completions parts; the model must see them (they were dropped)."""
    with openai.OpenAI(base_url=server.url, api_key="unused", max_retries=0) as mlxcel:  # mlxcel: no /v1
        reply = mlxcel.responses.create(
            model="sim",
            input=[{"role": "user", "content": [{"type": "text", "text": "Reply with: pineapple"}]}],  # type: ignore[list-item]
        )
        stored = mlxcel.responses.input_items.list(reply.id)
    assert reply.output_text == "pineapple"
    assert stored.data[0].content[0].type == "input_text"  # type: ignore[union-attr]


def test_unknown_content_parts_are_a_400_not_dropped(http: httpx.Client) -> None:
    body = {"model": "sim", "input": [{"role": "user", "content": [{"type": "input_audio", "input_audio": {}}]}]}
    reply = http.post("/v1/responses", json=body)
    assert reply.status_code == 400
    assert reply.json()["error"]["param"] == "input[0].content[0].type"
    vendor = {"model": "sim", "input": [{"role": "user", "content": [{"type": "input_text", "text": "Reply with: ok"},
                                                                       {"type": "acme:note", "x": 1}]}]}  # fmt: skip
    assert http.post("/v1/responses", json=vendor).status_code == 200  # a vendor extension is kept


def test_image_url_parts_reach_a_text_only_model_as_a_clear_400(http: httpx.Client) -> None:
    part = {"type": "image_url", "image_url": {"url": "data:image/png;base64,iVBORw0KGgo="}}
    body = {"model": EMBEDDED, "input": [{"role": "user", "content": [{"type": "text", "text": "What is it?"}, part]}]}
    reply = http.post("/v3/responses", json=body)
    assert reply.status_code == 400
    assert "image" in reply.json()["error"]["message"]


@pytest.mark.parametrize("model", ["sim", EMBEDDED])
@pytest.mark.parametrize("include", [False, True])
def test_include_stop_str_in_output_in_streams_as_in_json(http: httpx.Client, model: str, include: bool) -> None:
    """OpenVINO refuses ``false`` with streams; here both values hold in both modes (see docs/api.md)."""
    body = {"model": model, "input": "Tell me about rivers and lakes.", "temperature": 0, "seed": 3,
            "max_output_tokens": 30, "stop": [" "], "include_stop_str_in_output": include}  # fmt: skip
    whole = http.post("/v3/responses", json=body).json()["output"][-1]["content"][0]["text"]
    with http.stream("POST", "/v3/responses", json={**body, "stream": True}) as reply:
        events = parse_frames(reply.read())
    streamed = "".join(event["delta"] for event in events if event["type"] == "response.output_text.delta")
    assert streamed == whole and whole.strip()
    assert whole.endswith(" ") == include and whole.count(" ") == int(include)


def test_retrieve_honours_include_as_a_create_does(http: httpx.Client) -> None:
    """SGLang documents ``include`` on ``GET /responses/{id}``: what it asks for is shown, the rest left out."""
    body = {"model": "sim", "input": "Say hello.", "include": ["message.output_text.logprobs"], "top_logprobs": 1}
    created = http.post("/v1/responses", json=body).json()
    logprobs = created["output"][0]["content"][0]["logprobs"]
    assert logprobs
    url = f"/v1/responses/{created['id']}"
    assert http.get(url).json() == created  # no include: the response as stored
    shown = http.get(url, params={"include": "message.output_text.logprobs"}).json()
    assert shown["output"][0]["content"][0]["logprobs"] == logprobs
    assert http.get(url, params={"include[]": "message.output_text.logprobs"}).json() == shown
    plain = http.get(url, params={"include": "reasoning.encrypted_content"}).json()
    assert plain["output"][0]["content"][0]["logprobs"] == []
    wrong = http.get(url, params={"include": "everything"})
    assert wrong.status_code == 400 and wrong.json()["error"]["param"] == "include"
