"""``POST /v1/chat/completions`` on every backend, with the openai SDK's ``chat.completions`` client,
as LLMSim's load tests and every Chat Completions client use it."""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import ExitStack
from typing import Any

import httpx
import openai
import pytest

from responsa.config import Settings, UpstreamConfig
from tests.backends.mock_upstream import MockUpstream, Stream, text_chunks
from tests.conftest import LiveServer, serve, serve_app
from tests.http.test_seed_clients import CHAT_WEATHER as WEATHER
from tests.http.test_seed_clients import EMBEDDED


@pytest.fixture(scope="module")
def upstream() -> Iterator[tuple[MockUpstream, str]]:
    mock = MockUpstream()
    with serve_app(mock.app) as live:
        yield mock, f"{live.url}/v1"


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory, upstream: tuple[MockUpstream, str]) -> Iterator[LiveServer]:
    db = f"sqlite:///{tmp_path_factory.mktemp('chat') / 'r.db'}"
    with serve(Settings(db_url=db, models=(UpstreamConfig(name="up-model", urls=(upstream[1],)),))) as live:
        yield live


@pytest.fixture
def client(server: LiveServer) -> Iterator[openai.OpenAI]:
    with openai.OpenAI(base_url=server.v1, api_key="unused", max_retries=0) as sdk:
        yield sdk


@pytest.mark.parametrize("model", ["sim", EMBEDDED, "up-model"])
def test_a_completion_on_every_backend(client: openai.OpenAI, model: str) -> None:
    reply = client.chat.completions.create(
        model=model,
        messages=[{"role": "system", "content": "You are terse."}, {"role": "user", "content": "Reply with: ok"}],
        max_tokens=20,
    )
    assert reply.object == "chat.completion" and reply.model == model
    choice = reply.choices[0]
    assert choice.message.role == "assistant" and choice.message.content
    assert choice.finish_reason in ("stop", "length")
    assert (
        reply.usage is not None
        and reply.usage.total_tokens == reply.usage.prompt_tokens + reply.usage.completion_tokens
    )
    if model == "sim":
        assert choice.message.content == "ok" and choice.finish_reason == "stop"


@pytest.mark.parametrize("model", ["sim", EMBEDDED, "up-model"])
def test_a_stream_with_usage_on_every_backend(client: openai.OpenAI, model: str) -> None:
    chunks = list(client.chat.completions.create(
        model=model, messages=[{"role": "user", "content": "Reply with: streamed words"}], max_tokens=20,
        stream=True, stream_options={"include_usage": True},
    ))  # fmt: skip
    assert all(chunk.object == "chat.completion.chunk" for chunk in chunks)
    assert len({chunk.id for chunk in chunks}) == 1
    assert chunks[0].choices[0].delta.role == "assistant"
    text = "".join(chunk.choices[0].delta.content or "" for chunk in chunks if chunk.choices)
    finishes = [chunk.choices[0].finish_reason for chunk in chunks if chunk.choices and chunk.choices[0].finish_reason]
    assert text and finishes in (["stop"], ["length"])
    last = chunks[-1]
    assert last.choices == [] and last.usage is not None and last.usage.completion_tokens > 0
    if model == "sim":
        assert text == "streamed words"


def test_no_usage_chunk_unless_asked(client: openai.OpenAI) -> None:
    chunks = list(
        client.chat.completions.create(model="sim", messages=[{"role": "user", "content": "hi"}], stream=True)
    )
    assert all(chunk.choices for chunk in chunks) and all(chunk.usage is None for chunk in chunks)


def test_tools_round_trip(client: openai.OpenAI) -> None:
    messages: list[Any] = [{"role": "user", "content": "What's the weather in Oslo?"}]
    first = client.chat.completions.create(model="sim", messages=messages, tools=[WEATHER])  # type: ignore[list-item]
    choice = first.choices[0]
    assert choice.finish_reason == "tool_calls"
    [call] = choice.message.tool_calls or []
    assert call.function.name == "get_weather" and json.loads(call.function.arguments) == {"location": "Oslo"}
    messages += [choice.message.model_dump(exclude_none=True),
                 {"role": "tool", "tool_call_id": call.id, "content": "12 degrees and rain"}]  # fmt: skip
    second = client.chat.completions.create(model="sim", messages=messages, tools=[WEATHER])  # type: ignore[list-item]
    assert second.choices[0].finish_reason == "stop" and "12 degrees" in (second.choices[0].message.content or "")


def test_streamed_tool_calls(client: openai.OpenAI) -> None:
    chunks = list(client.chat.completions.create(
        model="sim", messages=[{"role": "user", "content": "What's the weather in Oslo?"}], tools=[WEATHER],  # type: ignore[list-item]
        tool_choice={"type": "function", "function": {"name": "get_weather"}}, stream=True,
    ))  # fmt: skip
    deltas = [call for chunk in chunks if chunk.choices for call in chunk.choices[0].delta.tool_calls or []]
    assert deltas[0].id and deltas[0].function and deltas[0].function.name == "get_weather"
    arguments = "".join(delta.function.arguments or "" for delta in deltas if delta.function)
    assert json.loads(arguments) == {"location": "Oslo"} and {delta.index for delta in deltas} == {0}
    assert chunks[-1].choices[0].finish_reason == "tool_calls"


def test_logprobs(client: openai.OpenAI) -> None:
    reply = client.chat.completions.create(
        model="sim", messages=[{"role": "user", "content": "Say hello."}], logprobs=True, top_logprobs=2
    )
    logprobs = reply.choices[0].logprobs
    assert logprobs is not None and logprobs.content
    assert "".join(entry.token for entry in logprobs.content) == reply.choices[0].message.content
    assert all(len(entry.top_logprobs) == 2 and entry.logprob <= 0 for entry in logprobs.content)


def test_upstream_logprobs_and_template_switches_pass_through(
    client: openai.OpenAI, upstream: tuple[MockUpstream, str]
) -> None:
    mock, _url = upstream
    entry = {"token": "hi", "logprob": -0.25, "bytes": [104, 105], "top_logprobs": []}
    chunks = text_chunks("hi")
    chunks[0]["choices"][0]["logprobs"] = {"content": [entry]}
    mock.script.append(Stream(chunks))
    reply = client.chat.completions.create(
        model="up-model", messages=[{"role": "user", "content": "hi"}], logprobs=True, stream=True,
        reasoning_effort="none", extra_body={"chat_template_kwargs": {"custom": 1}, "skip_special_tokens": False},
    )  # fmt: skip
    streamed = [e.model_dump() for chunk in reply if chunk.choices and chunk.choices[0].logprobs
                for e in chunk.choices[0].logprobs.content or []]  # fmt: skip
    assert streamed == [entry]
    sent = mock.requests[-1]
    assert sent["logprobs"] is True and sent["reasoning_effort"] == "none"
    assert sent["chat_template_kwargs"] == {"custom": 1, "enable_thinking": False}
    assert sent["skip_special_tokens"] is False


def test_simulator_faults_apply(server: LiveServer) -> None:
    body = {"model": "sim", "messages": [{"role": "user", "content": "hi"}]}
    reply = httpx.post(f"{server.v1}/chat/completions", json=body, headers={"x-responsa-fault": "rate_limit"})
    assert reply.status_code == 429 and reply.json()["error"]["type"]


def test_a_failure_after_the_stream_began_is_an_error_frame(server: LiveServer) -> None:
    body = {"model": "sim", "messages": [{"role": "user", "content": "Tell me a long story about ships"}],
            "stream": True}  # fmt: skip
    with httpx.stream("POST", f"{server.v1}/chat/completions", json=body,
                      headers={"x-responsa-fault": "mid_stream"}) as reply:  # fmt: skip
        frames = reply.read().decode().split("\n\n")
    assert frames[-2] == "data: [DONE]"
    assert "error" in json.loads(frames[-3].removeprefix("data: "))


@pytest.mark.parametrize(
    ("body", "param"),
    [({"model": "sim"}, "messages"), ({"model": "sim", "messages": [{"role": "robot", "content": "x"}]},
                                      "messages[0].role"),
     ({"model": "sim", "messages": [{"role": "user", "content": "x"}], "n": 3}, "n"),
     ({"model": "sim", "messages": [{"role": "user", "content": "x"}], "store": True}, "store"),
     ({"model": "sim", "messages": [{"role": "tool", "content": "x"}]}, "messages[0].tool_call_id")],
)  # fmt: skip
def test_bad_requests_are_openai_shaped_400s(server: LiveServer, body: dict[str, Any], param: str) -> None:
    reply = httpx.post(f"{server.v1}/chat/completions", json=body)
    assert reply.status_code == 400
    error = reply.json()["error"]
    assert error["param"] == param and error["type"] == "invalid_request_error"


def test_served_under_every_prefix(server: LiveServer) -> None:
    with ExitStack():
        for prefix in ("/v1", "", "/openai/v1", "/v3"):
            body = {"model": "sim", "messages": [{"role": "user", "content": "Reply with: ok"}]}
            reply = httpx.post(f"{server.url}{prefix}/chat/completions", json=body)
            assert reply.json()["choices"][0]["message"]["content"] == "ok"
