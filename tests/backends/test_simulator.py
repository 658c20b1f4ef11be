"""The simulator behaves like a model: through the HTTP API, with the SDK as client."""

from __future__ import annotations

import json
from typing import Any

import jsonschema
import openai
import pytest

from tests.http.test_streaming import WEATHER_TOOL

TIME_TOOL = {
    "type": "function",
    "name": "get_time",
    "description": "Current local time in a timezone",
    "parameters": {"type": "object", "properties": {"timezone": {"type": "string"}}, "required": ["timezone"]},
}
BOOKING_TOOL = {
    "type": "function",
    "name": "book_flight",
    "description": "Book a flight between two airports",
    "strict": True,
    "parameters": {
        "type": "object",
        "properties": {
            "origin": {"type": "string", "minLength": 3, "maxLength": 3, "pattern": "^[A-Z]{3}$"},
            "destination": {"type": "string"},
            "passengers": {"type": "integer", "minimum": 1, "maximum": 9},
            "date": {"type": "string", "format": "date"},
            "cabin": {"type": "string", "enum": ["economy", "business", "first"]},
            "flexible": {"type": "boolean"},
            "meals": {"type": "array", "items": {"type": "string"}, "minItems": 2, "uniqueItems": True},
            "contact": {
                "type": "object",
                "properties": {"email": {"type": "string", "format": "email"}, "phone": {"type": ["string", "null"]}},
                "required": ["email", "phone"],
                "additionalProperties": False,
            },
            "loyalty": {"anyOf": [{"$ref": "#/$defs/card"}, {"type": "null"}]},
        },
        "required": ["origin", "destination", "passengers", "date", "cabin", "flexible", "meals", "contact", "loyalty"],
        "additionalProperties": False,
        "$defs": {
            "card": {
                "type": "object",
                "properties": {"number": {"type": "string"}, "tier": {"type": "integer", "multipleOf": 5}},
                "required": ["number", "tier"],
            }
        },
    },
}


def calls(response: Any) -> list[Any]:
    return [item for item in response.output if item.type == "function_call"]


def test_same_seed_same_text_different_seed_different_text(app_client: openai.OpenAI) -> None:
    def text(seed: int) -> str:
        reply = app_client.responses.create(model="sim", input="Explain how tides work", extra_body={"seed": seed})
        return reply.output_text

    assert text(1) == text(1)
    assert len({text(seed) for seed in range(6)}) > 1


def test_temperature_zero_is_deterministic_without_seed(app_client: openai.OpenAI) -> None:
    texts = {
        app_client.responses.create(model="sim", input="Describe glaciers", temperature=0).output_text for _ in range(3)
    }
    assert len(texts) == 1


def test_text_is_about_the_input(app_client: openai.OpenAI) -> None:
    text = app_client.responses.create(model="sim", input="How do volcanoes erupt?").output_text
    assert "volcanoes" in text.lower()
    assert text.endswith((".", "!", "?"))


def test_max_output_tokens_is_honoured_exactly(app_client: openai.OpenAI) -> None:
    full = app_client.responses.create(model="sim", input="Explain photosynthesis", extra_body={"seed": 4})
    assert full.usage is not None and full.usage.output_tokens > 8
    cut = app_client.responses.create(
        model="sim", input="Explain photosynthesis", max_output_tokens=8, extra_body={"seed": 4}
    )
    assert cut.status == "incomplete"
    assert cut.incomplete_details is not None and cut.incomplete_details.reason == "max_output_tokens"
    assert cut.usage is not None and cut.usage.output_tokens == 8
    assert full.output_text.startswith(cut.output_text) and len(cut.output_text) < len(full.output_text)


def test_stop_sequences_cut_the_text(app_client: openai.OpenAI) -> None:
    reply = app_client.responses.create(
        model="sim", input="Reply with: alpha beta gamma", extra_body={"stop": [" gamma"]}
    )
    assert reply.output_text == "alpha beta"


def test_token_counts_are_consistent(app_client: openai.OpenAI) -> None:
    short = app_client.responses.create(model="sim", input="Reply with: one")
    longer = app_client.responses.create(model="sim", input="Reply with: one two three four five six")
    assert short.usage is not None and longer.usage is not None
    assert longer.usage.input_tokens - short.usage.input_tokens == 5
    assert (short.usage.output_tokens, longer.usage.output_tokens) == (1, 6)


def test_auto_calls_a_tool_when_the_input_asks_for_it(app_client: openai.OpenAI) -> None:
    reply = app_client.responses.create(
        model="sim", input="What's the weather in Lisbon?", tools=[WEATHER_TOOL, TIME_TOOL]
    )
    [call] = calls(reply)
    assert call.name == "get_weather" and call.call_id.startswith("call_") and call.id.startswith("fc_")
    assert json.loads(call.arguments)["location"] == "Lisbon"
    assert reply.output_text == ""


def test_auto_answers_in_text_when_no_tool_fits(app_client: openai.OpenAI) -> None:
    reply = app_client.responses.create(model="sim", input="Write a poem about autumn leaves", tools=[WEATHER_TOOL])
    assert calls(reply) == [] and "autumn" in reply.output_text.lower()


def test_none_never_calls(app_client: openai.OpenAI) -> None:
    reply = app_client.responses.create(
        model="sim", input="What's the weather in Lisbon?", tools=[WEATHER_TOOL], tool_choice="none"
    )
    assert calls(reply) == [] and reply.output_text


def test_required_always_calls(app_client: openai.OpenAI) -> None:
    reply = app_client.responses.create(
        model="sim", input="Write a poem about autumn", tools=[WEATHER_TOOL], tool_choice="required"
    )
    assert [c.name for c in calls(reply)] == ["get_weather"]


def test_named_function_is_the_one_called(app_client: openai.OpenAI) -> None:
    reply = app_client.responses.create(
        model="sim",
        input="What's the weather in Lisbon?",
        tools=[WEATHER_TOOL, TIME_TOOL],
        tool_choice={"type": "function", "name": "get_time"},
    )
    assert [c.name for c in calls(reply)] == ["get_time"]


@pytest.mark.parametrize("mode", ["auto", "required"])
def test_allowed_tools_is_a_hard_constraint(app_client: openai.OpenAI, mode: str) -> None:
    reply = app_client.responses.create(
        model="sim",
        input="What's the weather in Lisbon and the time there?",
        tools=[WEATHER_TOOL, TIME_TOOL],
        tool_choice={"type": "allowed_tools", "mode": mode, "tools": [{"type": "function", "name": "get_time"}]},
    )
    assert {c.name for c in calls(reply)} == {"get_time"}
    echoed = reply.tool_choice
    assert echoed.type == "allowed_tools" and echoed.mode == mode


def test_parallel_calls_one_per_place_unless_disabled(app_client: openai.OpenAI) -> None:
    question = "Compare the weather in Paris, Tokyo and Lima"
    parallel = app_client.responses.create(model="sim", input=question, tools=[WEATHER_TOOL])
    assert [json.loads(c.arguments)["location"] for c in calls(parallel)] == ["Paris", "Tokyo", "Lima"]
    assert len({c.call_id for c in calls(parallel)}) == 3
    single = app_client.responses.create(model="sim", input=question, tools=[WEATHER_TOOL], parallel_tool_calls=False)
    assert len(calls(single)) == 1 and single.parallel_tool_calls is False


def test_max_tool_calls_caps_the_calls(app_client: openai.OpenAI) -> None:
    reply = app_client.responses.create(
        model="sim", input="Compare the weather in Paris, Tokyo and Lima", tools=[WEATHER_TOOL], max_tool_calls=2
    )
    assert len(calls(reply)) == 2 and reply.max_tool_calls == 2


def test_arguments_are_valid_for_a_demanding_schema(app_client: openai.OpenAI) -> None:
    reply = app_client.responses.create(
        model="sim",
        input="Book a flight from LHR to Paris for 2 people in business",
        tools=[BOOKING_TOOL],
        tool_choice="required",
    )
    [call] = calls(reply)
    arguments = json.loads(call.arguments)
    jsonschema.validate(arguments, BOOKING_TOOL["parameters"])
    assert arguments["origin"] == "LHR" and arguments["passengers"] == 2 and arguments["cabin"] == "business"


def test_function_call_output_round_trip_is_answered_from_the_output(app_client: openai.OpenAI) -> None:
    first = app_client.responses.create(
        model="sim", input="What's the weather in Paris and Tokyo?", tools=[WEATHER_TOOL]
    )
    results = {"Paris": "18C and partly cloudy", "Tokyo": "24C and sunny"}
    outputs = [
        {"type": "function_call_output", "call_id": c.call_id, "output": results[json.loads(c.arguments)["location"]]}
        for c in calls(first)
    ]
    second = app_client.responses.create(
        model="sim", previous_response_id=first.id, input=outputs, tools=[WEATHER_TOOL]
    )
    assert calls(second) == []
    assert "18C and partly cloudy" in second.output_text and "24C and sunny" in second.output_text


def test_json_schema_output_is_valid_json_for_the_schema(app_client: openai.OpenAI) -> None:
    schema = BOOKING_TOOL["parameters"]
    reply = app_client.responses.create(
        model="sim",
        input="Plan a trip from JFK to Rome for 3",
        text={"format": {"type": "json_schema", "name": "trip", "schema": schema, "strict": True}},
    )
    jsonschema.validate(json.loads(reply.output_text), schema)
    assert reply.text is not None and reply.text.format.type == "json_schema"


def test_json_schema_output_through_the_sdk_parse_helper(app_client: openai.OpenAI) -> None:
    from pydantic import BaseModel

    class City(BaseModel):
        name: str
        population: int
        landmarks: list[str]

    parsed = app_client.responses.parse(model="sim", input="Tell me about Vienna with 2000000 people", text_format=City)
    city = parsed.output_parsed
    assert city is not None and city.name == "Vienna" and city.population == 2000000


def test_json_object_output_is_a_json_object(app_client: openai.OpenAI) -> None:
    reply = app_client.responses.create(model="sim", input="Describe Mars", text={"format": {"type": "json_object"}})
    assert isinstance(json.loads(reply.output_text), dict)


@pytest.mark.parametrize(
    ("fault", "status", "kind"),
    [
        ("rate_limit", 429, openai.RateLimitError),
        ("server_error", 500, openai.InternalServerError),
        ("unavailable", 503, openai.InternalServerError),
    ],
)
def test_injected_faults_map_to_openai_errors(app_client: openai.OpenAI, fault: str, status: int, kind: type) -> None:
    with pytest.raises(kind) as raised:
        app_client.responses.create(model="sim", input="hi", extra_headers={"x-responsa-fault": fault})
    assert raised.value.status_code == status
    body = raised.value.response.json()["error"]
    assert set(body) == {"message", "type", "param", "code"}


def _agent_tool(name: str) -> Any:
    return {"type": "function", "name": name, "parameters": {"type": "object", "properties": {}}}


def test_delegation_waits_again_while_a_wait_times_out(app_client: openai.OpenAI) -> None:
    """The delegation rule over client functions of the same names (as a model sees the hosted ones):
    a wait that timed out with a subagent still running is followed by another wait; one that did
    not is answered from its results."""
    tools = [_agent_tool("spawn_agent"), _agent_tool("wait_agent")]
    first = app_client.responses.create(model="sim", input="Delegate to a helper: Reply with: done",
                                        tools=tools, parallel_tool_calls=True)  # fmt: skip
    assert [call.name for call in calls(first)] == ["spawn_agent", "wait_agent"]

    def answered(previous: Any, *outputs: dict[str, Any]) -> Any:
        """``previous`` continued with an output for each of its calls, in order."""
        given = [{"type": "function_call_output", "call_id": call.call_id, "output": json.dumps(output)}
                 for call, output in zip(calls(previous), outputs, strict=True)]  # fmt: skip
        return app_client.responses.create(model="sim", previous_response_id=previous.id, input=given, tools=tools)

    spawned = {"agent": "/root/task_1", "status": "queued"}
    timed_out = answered(first, spawned, {"status": {"/root/task_1": "running"}, "timed_out": True})
    assert [(call.name, json.loads(call.arguments)) for call in calls(timed_out)] == [
        ("wait_agent", {"targets": ["task_1"]})
    ]
    finished = answered(timed_out, {"status": {"/root/task_1": {"completed": "done"}}, "timed_out": False})
    assert calls(finished) == [] and finished.output_text == "Subagents reported. task_1: done"
