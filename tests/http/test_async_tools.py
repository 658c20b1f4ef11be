"""Asynchronous tool calls (``"async": true`` on a function or custom tool), as OpenAI's async tool
calling guide describes: the call item carries ``async: true``, the model's turn goes on without the
result, and the client sends the result later by ``call_id``."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import openai
import pytest

from responsa.backends.llama_cpp import DEFAULT_MODEL_NAME
from tests.backends.mock_upstream import Stream, text_chunks
from tests.backends.test_chat_completions import Rig, start_rig
from tests.conftest import LiveServer, sqlite_server
from tests.http.test_streaming import WEATHER_TOOL, http_chunks, parse_frames
from tests.spec import openai_event

ASYNC_WEATHER = {**WEATHER_TOOL, "async": True}
PROMPT = "What is the weather in Paris? Also, what should I pack for a beach week?"


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveServer]:
    yield from sqlite_server(tmp_path_factory, "async-tools")


@pytest.fixture
def rig(tmp_path: Path) -> Iterator[Rig]:
    yield from start_rig(tmp_path)


def test_the_model_goes_on_after_an_async_call_and_reads_the_result_later(client: openai.OpenAI) -> None:
    first = client.responses.create(model="sim", input=PROMPT, tools=[ASYNC_WEATHER])  # type: ignore[list-item]
    assert first.status == "completed"
    assert [item.type for item in first.output] == ["function_call", "message"]
    call = first.output[0]
    assert call.type == "function_call" and call.async_ is True and call.status == "completed"
    assert first.tools[0].to_dict()["async"] is True  # the tool is echoed as sent
    # The client ran the call meanwhile; its result arrives in a later request, by call_id.
    later = client.responses.create(
        model="sim", previous_response_id=first.id, tools=[ASYNC_WEATHER],  # type: ignore[list-item]
        input=[{"type": "function_call_output", "call_id": call.call_id, "output": "Sunny, 24 C"}],
    )  # fmt: skip
    assert later.status == "completed" and later.output[-1].type == "message"
    assert "Sunny, 24 C" in later.output_text


def test_a_call_of_a_tool_that_waits_still_ends_the_response(client: openai.OpenAI) -> None:
    waiting = client.responses.create(model="sim", input=PROMPT, tools=[WEATHER_TOOL])  # type: ignore[list-item]
    assert [item.type for item in waiting.output] == ["function_call"]
    assert waiting.output[0].async_ is None


def test_an_async_custom_tool_call_streams_and_the_turn_goes_on(server: LiveServer) -> None:
    tool = {"type": "custom", "name": "weather_lookup", "description": "Look up the weather for a city", "async": True}
    events = parse_frames(b"".join(http_chunks(server.url, {
        "model": "sim", "input": "Look up the weather for Paris", "tools": [tool], "stream": True,
        "tool_choice": {"type": "custom", "name": "weather_lookup"},
    })))  # fmt: skip
    assert all(openai_event(event).type == event["type"] for event in events)
    done = [event["item"] for event in events if event["type"] == "response.output_item.done"]
    assert [item["type"] for item in done] == ["custom_tool_call", "message"]
    assert done[0]["async"] is True
    assert events[-1]["type"] == "response.completed"


def test_an_upstream_reads_an_acknowledgement_then_the_result_as_a_message(rig: Rig) -> None:
    call = {"index": 0, "id": "call_w", "type": "function",
            "function": {"name": "get_weather", "arguments": '{"location": "Paris"}'}}  # fmt: skip
    calls = [{"choices": [{"index": 0, "delta": {"tool_calls": [call]}}]},
             {"choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}]}]  # fmt: skip
    rig.first.script += [
        Stream(calls),
        Stream(text_chunks("Pack light clothes; the forecast is on its way.")),
        Stream(text_chunks("Paris is sunny.")),
    ]
    first = rig.sdk.responses.create(model="up-model", input=PROMPT, tools=[ASYNC_WEATHER])  # type: ignore[list-item]
    assert [item.type for item in first.output] == ["function_call", "message"]
    second_turn: list[dict[str, Any]] = rig.first.requests[-1]["messages"]
    assert second_turn[-2]["tool_calls"][0]["id"] == "call_w"
    assert second_turn[-1]["role"] == "tool" and "asynchronously" in second_turn[-1]["content"]

    rig.sdk.responses.create(
        model="up-model", previous_response_id=first.id, tools=[ASYNC_WEATHER],  # type: ignore[list-item]
        input=[{"type": "function_call_output", "call_id": "call_w", "output": "Sunny, 24 C"}],
    )  # fmt: skip
    seen: list[dict[str, Any]] = rig.first.requests[-1]["messages"]
    assert [message["role"] for message in seen[-4:]] == ["assistant", "tool", "assistant", "user"]
    assert "call_w" in str(seen[-1]["content"]) and "Sunny, 24 C" in str(seen[-1]["content"])


def test_the_embedded_model_goes_on_after_an_async_call(client: openai.OpenAI) -> None:
    response = client.responses.create(
        model=DEFAULT_MODEL_NAME, input="What is the weather in Paris?", tools=[ASYNC_WEATHER],  # type: ignore[list-item]
        tool_choice={"type": "function", "name": "get_weather"}, max_output_tokens=48,
    )  # fmt: skip
    assert response.output[0].type == "function_call" and response.output[0].async_ is True
    assert response.output[-1].type == "message"  # the turn went on after the call


def test_async_must_be_a_boolean(client: openai.OpenAI) -> None:
    with pytest.raises(openai.BadRequestError) as caught:
        client.responses.create(model="sim", input="Hi", tools=[{**WEATHER_TOOL, "async": "yes"}])  # type: ignore[list-item]
    assert caught.value.param == "tools[0].async"
