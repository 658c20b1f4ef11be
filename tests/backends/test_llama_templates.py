"""Chat templates that know tools, end to end with the packaged model: each family's template (written
for these tests in its style) lists the tools, a required call is written in that family's own words
under a grammar and read back by its parser, and the call and its result are rendered back into the
next prompt the way the template wants them. A template that opens a ``<think>`` block gives
reasoning items. (The 135M model does not call tools unprompted; recorded outputs of real models of
each family are read in test_tool_formats.py.)"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import httpx
import jsonschema
import openai
import pytest

from responsa.backends.llama_cpp import default_gguf
from responsa.config import EmbeddedModelConfig, Settings
from tests.conftest import serve
from tests.http.test_streaming import WEATHER_TOOL, parse_frames

TEMPLATES = Path(__file__).parent / "templates"
FORMATS = {"hermes": "hermes.jinja", "mistral": "mistral.jinja", "llama3": "llama3.jinja", "json": "json_calls.jinja"}


@pytest.fixture(scope="module")
def base_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    models = tuple(
        EmbeddedModelConfig(source=name, name=name, path=default_gguf(), context=1024, chat_template=TEMPLATES / file)
        for name, file in {**FORMATS, "thinking": "thinking.jinja"}.items()
    )
    db = f"sqlite:///{tmp_path_factory.mktemp('templates')}/db.sqlite"
    with serve(Settings(db_url=db, simulator=False, embedded=False, embedded_models=models)) as server:
        yield server.v1


@pytest.fixture
def http(base_url: str) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=base_url, timeout=120) as client:
        yield client


@pytest.fixture
def client(base_url: str) -> Iterator[openai.OpenAI]:
    with openai.OpenAI(base_url=base_url, api_key="-") as client:
        yield client


@pytest.mark.parametrize("model", sorted(FORMATS))
def test_a_required_call_in_the_models_own_words_is_read_back_and_rendered_next_turn(
    model: str, http: httpx.Client, client: openai.OpenAI
) -> None:
    body = {"model": model, "input": "What's the weather in Paris?", "tools": [WEATHER_TOOL], "tool_choice": "required",
            "max_output_tokens": 80, "temperature": 0, "stream": True}  # fmt: skip
    events = parse_frames(http.post("/responses", json=body).content)
    final = events[-1]["response"]
    assert events[-1]["type"] == "response.completed", final
    [call] = final["output"]
    assert call["type"] == "function_call" and call["name"] == "get_weather"
    jsonschema.validate(json.loads(call["arguments"]), WEATHER_TOOL["parameters"])
    deltas = [e["delta"] for e in events if e["type"] == "response.function_call_arguments.delta"]
    assert "".join(deltas) == call["arguments"]
    # The result goes back through the template (Mistral's wants ids of nine characters: it raises otherwise).
    follow = client.responses.create(
        model=model, previous_response_id=final["id"], tools=[WEATHER_TOOL], tool_choice="none",  # type: ignore[arg-type]
        input=[{"type": "function_call_output", "call_id": call["call_id"], "output": '{"celsius": 21}'}],
        max_output_tokens=12, temperature=0,
    )  # fmt: skip
    assert follow.status in ("completed", "incomplete") and follow.error is None
    assert all(item.type == "message" for item in follow.output)  # (the 135M model may end its turn at once)


@pytest.mark.parametrize("model", sorted(FORMATS))
def test_the_template_lists_the_tools(model: str, http: httpx.Client) -> None:
    def count(**extra: object) -> int:
        reply = http.post("/responses/input_tokens", json={"model": model, "input": "Weather in Paris?", **extra})
        assert reply.status_code == 200, reply.text
        return int(reply.json()["input_tokens"])

    assert count(tools=[WEATHER_TOOL]) > count() + 30  # the tool's JSON schema is in the prompt


def test_a_template_that_opens_a_think_block_gives_reasoning(http: httpx.Client) -> None:
    body = {"model": "thinking", "input": "Why is the sky blue?", "max_output_tokens": 16, "temperature": 0,
            "stream": True}  # fmt: skip
    events = parse_frames(http.post("/responses", json=body).content)
    final = events[-1]["response"]
    reasoning = final["output"][0]
    assert reasoning["type"] == "reasoning" and reasoning["content"][0]["type"] == "reasoning_text"
    streamed = "".join(e["delta"] for e in events if e["type"] == "response.reasoning_text.delta")
    assert streamed.strip() and streamed == reasoning["content"][0]["text"]
    details = final["usage"]["output_tokens_details"]
    assert 0 < details["reasoning_tokens"] <= final["usage"]["output_tokens"]
    # Clients that ask for a summary (Codex, the Agents SDK) get the thinking as one.
    events = parse_frames(http.post("/responses", json={**body, "reasoning": {"summary": "auto"}}).content)
    summary = "".join(e["delta"] for e in events if e["type"] == "response.reasoning_summary_text.delta")
    assert summary == streamed
    assert events[-1]["response"]["output"][0]["summary"][0]["text"] == streamed
