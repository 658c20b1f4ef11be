"""Seed behaviours of issue 70, each through the HTTP API: ``tool_choice`` held by the server against an
upstream that ignores it, ``allowed_tools`` keeping every definition in the prompt, ``user`` and
``safety_identifier`` reaching upstreams (mlxcel's rule), OpenVINO's thinking switch giving summaries,
``prompt_cache_retention`` and ``context_management`` checked and echoed."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import openai
import pytest

from tests.backends.mock_upstream import Stream
from tests.backends.test_chat_completions import Rig, start_rig
from tests.http.test_seed_rows import THINKING
from tests.http.test_streaming import WEATHER_TOOL, parse_frames

TIME_TOOL = {"type": "function", "name": "get_time", "description": "Get the time in a city",
             "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}}  # fmt: skip


@pytest.fixture
def rig(tmp_path: Path) -> Iterator[Rig]:
    yield from start_rig(tmp_path)


def _weather_call() -> Stream:
    """An upstream that calls ``get_weather`` whatever it was told."""
    entry = {"index": 0, "id": "call_0", "type": "function", "function": {"name": "get_weather", "arguments": "{}"}}
    return Stream([{"choices": [{"index": 0, "delta": {"tool_calls": [entry]}}]},
                   {"choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}]}])  # fmt: skip


@pytest.mark.parametrize(
    "choice",
    ["none", {"type": "function", "name": "get_time"},
     {"type": "allowed_tools", "mode": "auto", "tools": [{"type": "function", "name": "get_time"}]}],
)  # fmt: skip
def test_a_call_the_tool_choice_forbids_never_reaches_the_client(rig: Rig, choice: Any) -> None:
    body = {
        "model": "up-model",
        "input": "Weather in Paris?",
        "tools": [WEATHER_TOOL, TIME_TOOL],
        "tool_choice": choice,
    }
    rig.first.script.append(_weather_call())
    events = parse_frames(rig.http.post("/v1/responses", json={**body, "stream": True}).content)
    assert not [event for event in events if "function_call" in event["type"]]
    assert not [event for event in events if event.get("item", {}).get("type") == "function_call"]
    failed = events[-1]["response"]
    assert (events[-1]["type"], failed["error"]["code"]) == ("response.failed", "tool_choice_violated")
    assert "get_weather" in failed["error"]["message"] and failed["output"] == []
    assert rig.sdk.responses.retrieve(failed["id"]).status == "failed"  # stored as it ended
    rig.first.script.append(_weather_call())
    reply = rig.http.post("/v1/responses", json=body)  # not streamed: the error, the call nowhere
    assert reply.status_code == 500 and reply.json()["error"]["code"] == "tool_choice_violated"
    rig.first.script.append(_weather_call())
    allowed = rig.sdk.responses.create(model="up-model", input="Weather?", tools=[WEATHER_TOOL, TIME_TOOL])
    assert [item.type for item in allowed.output] == ["function_call"]  # under "auto" the same call is passed on


def test_allowed_tools_keep_every_definition_in_the_prompt(rig: Rig, client: openai.OpenAI) -> None:
    only_time = {"type": "allowed_tools", "mode": "required", "tools": [{"type": "function", "name": "get_time"}]}
    rig.sdk.responses.create(model="up-model", input="Time?", tools=[WEATHER_TOOL, TIME_TOOL], tool_choice=only_time)  # type: ignore[arg-type]
    sent = rig.first.requests[-1]
    assert [tool["function"]["name"] for tool in sent["tools"]] == ["get_weather", "get_time"]
    assert sent["tool_choice"] == {"type": "function", "function": {"name": "get_time"}}  # the one allowed
    question = "What's the weather in Lisbon and the time there?"
    free = client.responses.create(model="sim", input=question, tools=[WEATHER_TOOL, TIME_TOOL])  # type: ignore[list-item]
    held = client.responses.create(model="sim", input=question, tools=[WEATHER_TOOL, TIME_TOOL], tool_choice=only_time)  # type: ignore[list-item,arg-type]
    assert held.usage is not None and free.usage is not None
    assert held.usage.input_tokens == free.usage.input_tokens  # the same prompt: its cached prefix holds
    assert {item.name for item in held.output if item.type == "function_call"} == {"get_time"}


def test_upstreams_hear_who_the_user_is_as_mlxcel_tells_them(rig: Rig) -> None:
    rig.sdk.responses.create(model="up-model", input="Hi", user="u-1", safety_identifier="s-1")
    assert (rig.first.requests[-1]["user"], rig.first.requests[-1]["safety_identifier"]) == ("u-1", "s-1")
    rig.sdk.responses.create(model="up-model", input="Hi", safety_identifier="s-2")
    assert (rig.first.requests[-1]["user"], rig.first.requests[-1]["safety_identifier"]) == ("s-2", "s-2")
    rig.sdk.responses.create(model="up-model", input="Hi")
    assert not {"user", "safety_identifier"} & rig.first.requests[-1].keys()


def test_openvino_s_thinking_switch_gives_the_reasoning_as_summary(rig: Rig) -> None:
    rig.first.script.append(Stream(THINKING))
    body = {"model": "up-model", "input": "2+2?", "stream": True, "chat_template_kwargs": {"enable_thinking": True}}
    events = parse_frames(rig.http.post("/v1/responses", json=body).content)
    assert "response.reasoning_summary_text.delta" in [event["type"] for event in events]
    final = events[-1]["response"]
    assert final["output"][0]["summary"] == [{"type": "summary_text", "text": "Two and two make four."}]
    assert final["reasoning"]["summary"] == "auto"  # what it ran with, echoed
    assert rig.first.requests[-1]["chat_template_kwargs"] == {"enable_thinking": True}
    rig.first.script.append(Stream(THINKING))
    off = {**body, "stream": False, "chat_template_kwargs": {"enable_thinking": False}}
    assert rig.http.post("/v1/responses", json=off).json()["output"][0]["summary"] == []


def test_prompt_cache_retention_is_checked_and_echoed(client: openai.OpenAI) -> None:
    for retention in ("in_memory", "24h"):
        made = client.responses.create(model="sim", input="Hi", prompt_cache_retention=retention)  # type: ignore[arg-type]
        assert made.prompt_cache_retention == retention
        assert client.responses.retrieve(made.id).prompt_cache_retention == retention
    with pytest.raises(openai.BadRequestError) as caught:
        client.responses.create(model="sim", input="Hi", prompt_cache_retention="forever")  # type: ignore[arg-type]
    assert caught.value.param == "prompt_cache_retention"


def test_an_unknown_context_management_entry_is_a_400_naming_it(client: openai.OpenAI) -> None:
    with pytest.raises(openai.BadRequestError) as caught:
        client.responses.create(model="sim", input="Hi", extra_body={"context_management": [{"type": "bogus"}]})
    assert caught.value.param == "context_management[0].type"


def test_allowed_tools_written_without_a_mode_as_the_specification_writes_it(client: openai.OpenAI) -> None:
    choice = {"type": "allowed_tools", "tools": [{"type": "function", "name": "get_time"}]}  # 001's example: no mode
    made = client.responses.create(model="sim", input="What's the weather in Lisbon and the time there?",
                                   tools=[WEATHER_TOOL, TIME_TOOL], tool_choice=choice)  # type: ignore[arg-type,list-item]  # fmt: skip
    assert {item.name for item in made.output if item.type == "function_call"} == {"get_time"}
    assert made.tool_choice.mode == "auto"  # type: ignore[union-attr]  # OpenAI's field, filled in as applied
