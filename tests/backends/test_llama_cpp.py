"""The embedded model: real SmolLM2-135M through llama.cpp, short generations, through the HTTP API."""

from __future__ import annotations

import json
import time

import httpx
import jsonschema
import openai
import pytest

from responsa.backends.llama_cpp import DEFAULT_MODEL_NAME
from tests.conftest import StreamReader
from tests.http.test_streaming import WEATHER_TOOL, parse_frames, without_parsed

MODEL = DEFAULT_MODEL_NAME


def test_the_embedded_model_is_listed(client: openai.OpenAI) -> None:
    assert MODEL in [model.id for model in client.models.list()]


def test_answers_with_real_text_and_exact_token_limit(client: openai.OpenAI) -> None:
    reply = client.responses.create(model=MODEL, input="Name a fruit.", max_output_tokens=6, temperature=0)
    assert reply.output_text.strip()
    assert reply.usage is not None and reply.usage.input_tokens > 5
    assert reply.usage.output_tokens <= 6
    if reply.status == "incomplete":
        assert reply.usage.output_tokens == 6
        assert reply.incomplete_details is not None and reply.incomplete_details.reason == "max_output_tokens"


def test_seeded_greedy_output_is_deterministic(client: openai.OpenAI) -> None:
    def run() -> str:
        return client.responses.create(
            model=MODEL, input="Write one sentence about the sea.", max_output_tokens=12, temperature=0,
            extra_body={"seed": 3},
        ).output_text  # fmt: skip

    assert run() == run()


def test_streams_token_by_token_and_matches_retrieve(client: openai.OpenAI, http: httpx.Client) -> None:
    body = {"model": MODEL, "input": "Say hello to the world.", "max_output_tokens": 10, "stream": True}
    events = parse_frames(http.post("/v1/responses", json=body).content)
    deltas = [e["delta"] for e in events if e["type"] == "response.output_text.delta"]
    assert len(deltas) >= 3
    final = events[-1]["response"]
    assert "".join(deltas) == final["output"][0]["content"][0]["text"]
    # A grammar that must end quickly, so the response completes (the SDK helper wants response.completed).
    schema = {
        "type": "object",
        "properties": {"ok": {"type": "boolean"}},
        "required": ["ok"],
        "additionalProperties": False,
    }
    text = {"format": {"type": "json_schema", "name": "ok", "schema": schema}}
    with client.responses.stream(model=MODEL, input="Are you ok?", max_output_tokens=30, text=text) as stream:  # type: ignore[arg-type]
        rebuilt = stream.get_final_response()
    assert client.responses.retrieve(rebuilt.id).model_dump() == without_parsed(rebuilt.model_dump())


def test_json_schema_is_enforced_by_grammar(client: openai.OpenAI) -> None:
    schema = {
        "type": "object",
        "properties": {"name": {"type": "string", "maxLength": 20}, "age": {"type": "integer"}},
        "required": ["name", "age"],
        "additionalProperties": False,
    }
    reply = client.responses.create(
        model=MODEL, input="Describe a cat.", max_output_tokens=60,
        text={"format": {"type": "json_schema", "name": "cat", "schema": schema}},
    )  # fmt: skip
    assert reply.status == "completed"
    jsonschema.validate(json.loads(reply.output_text), schema)


def test_required_and_named_tool_choice_are_forced_by_grammar(client: openai.OpenAI) -> None:
    for choice in ("required", {"type": "function", "name": "get_weather"}):
        reply = client.responses.create(
            model=MODEL, input="What's the weather in Paris?", tools=[WEATHER_TOOL], tool_choice=choice,  # type: ignore[arg-type]
            max_output_tokens=60, temperature=0,  # sampled, the 135M model can loop inside a string past the limit
        )  # fmt: skip
        [call] = reply.output
        assert call.type == "function_call" and call.name == "get_weather"
        jsonschema.validate(json.loads(call.arguments), WEATHER_TOOL["parameters"])


def test_a_required_call_cut_short_by_max_output_tokens_is_incomplete_not_failed(http: httpx.Client) -> None:
    # Greedy, this call ends after 33 tokens (`{ "name": "get_weather", "arguments": {"location": …}}`): 30 stop
    # inside its arguments, which the response keeps as they were written.
    body = {"model": MODEL, "input": "Weather in Paris?", "tools": [WEATHER_TOOL], "tool_choice": "required",
            "max_output_tokens": 30, "temperature": 0, "stream": True}  # fmt: skip
    events = parse_frames(http.post("/v1/responses", json=body).content)
    final = events[-1]
    assert final["type"] == "response.incomplete", final
    assert final["response"]["incomplete_details"] == {"reason": "max_output_tokens"}
    [call] = final["response"]["output"]
    assert call["type"] == "function_call" and call["name"] == "get_weather"
    assert call["arguments"].startswith("{") and call["status"] == "incomplete"
    with pytest.raises(json.JSONDecodeError):  # as far as it was written
        json.loads(call["arguments"])
    done = [e for e in events if e["type"] == "response.function_call_arguments.done"]
    assert [e["arguments"] for e in done] == [call["arguments"]]
    assert http.get(f"/v1/responses/{final['response']['id']}").json() == final["response"]


def test_input_beyond_the_context_window_is_a_400(http: httpx.Client) -> None:
    reply = http.post("/v1/responses", json={"model": MODEL, "input": "word " * 5000, "max_output_tokens": 5})
    assert reply.status_code == 400
    assert reply.json()["error"]["code"] == "context_length_exceeded"


def test_cancel_stops_generation_and_frees_the_model(client: openai.OpenAI, http: httpx.Client) -> None:
    # Greedy decoding of this prompt runs on for thousands of tokens without reaching EOS.
    body = {"model": MODEL, "input": "Tell a very long story.", "max_output_tokens": 3000, "stream": True,
            "temperature": 0}  # fmt: skip
    reader = StreamReader(f"{str(http.base_url).rstrip('/')}/v1/responses", body, after=5, timeout=120)
    assert reader.ready.wait(60)
    seen = reader.events
    response_id = seen[0]["response"]["id"]
    started = time.monotonic()
    cancelled = http.post(f"/v1/responses/{response_id}/cancel").json()
    assert reader.join(60)
    assert cancelled["status"] == "cancelled"
    assert time.monotonic() - started < 30
    produced = sum(1 for e in seen if e["type"] == "response.output_text.delta")
    assert produced < 3000
    # The inference thread is free for the next request.
    assert client.responses.create(model=MODEL, input="Hi", max_output_tokens=3).status in ("completed", "incomplete")
