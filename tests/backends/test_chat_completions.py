"""OpenAI-compatible upstreams: translation both ways, streaming, errors, workers, health, pooling."""

from __future__ import annotations

import base64
import json
import time
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import Any

import httpx
import openai
import pytest

from responsa.config import Settings, UpstreamConfig
from tests.backends.mock_upstream import Fail, Garbage, MockUpstream, Stall, Stream, text_chunks
from tests.conftest import LiveServer, serve, serve_app
from tests.http.test_streaming import WEATHER_TOOL, http_chunks, parse_frames


class Rig:
    """Mock upstream workers behind a responsa server."""

    def __init__(self, upstreams: list[MockUpstream], server: LiveServer, urls: list[str]) -> None:
        self.upstreams = upstreams
        self.server = server
        self.urls = urls
        self.sdk = openai.OpenAI(base_url=server.v1, api_key="x", max_retries=0)
        self.http = httpx.Client(base_url=server.url, timeout=30)

    @property
    def first(self) -> MockUpstream:
        return self.upstreams[0]


def start_rig(
    tmp_path: Path, workers: int = 1, strategy: str = "least_busy", host: str = "127.0.0.1", **settings: Any
) -> Iterator[Rig]:
    with ExitStack() as stack:
        upstreams = [MockUpstream() for _ in range(workers)]
        urls = [f"{stack.enter_context(serve_app(up.app)).url}/v1".replace("127.0.0.1", host) for up in upstreams]
        model = UpstreamConfig(name="up-model", urls=tuple(urls), upstream_model="served-name", strategy=strategy)
        config = Settings(db_url=f"sqlite:///{tmp_path / 'up.db'}", models=(model,), embedded=False, **settings)
        rig = Rig(upstreams, stack.enter_context(serve(config)), urls)
        stack.callback(rig.sdk.close)
        stack.callback(rig.http.close)
        yield rig


@pytest.fixture
def rig(tmp_path: Path) -> Iterator[Rig]:
    yield from start_rig(tmp_path)


def test_text_answer_and_usage(rig: Rig) -> None:
    rig.first.script.append(
        Stream(
            text_chunks(
                "Hi", " there",
                usage={"prompt_tokens": 12, "completion_tokens": 2, "prompt_tokens_details": {"cached_tokens": 8},
                       "completion_tokens_details": {"reasoning_tokens": 0}},
            )
        )
    )  # fmt: skip
    reply = rig.sdk.responses.create(model="up-model", input="Say hi", instructions="Be warm.", max_output_tokens=50)
    assert reply.output_text == "Hi there" and reply.status == "completed"
    assert reply.usage is not None
    assert (reply.usage.input_tokens, reply.usage.output_tokens, reply.usage.total_tokens) == (12, 2, 14)
    assert reply.usage.input_tokens_details.cached_tokens == 8
    sent = rig.first.requests[-1]
    assert sent["model"] == "served-name" and "stream" not in sent
    assert sent["messages"] == [{"role": "system", "content": "Be warm."}, {"role": "user", "content": "Say hi"}]
    assert sent["max_tokens"] == 50


def test_streaming_clients_get_a_streaming_upstream_and_usage_is_estimated_when_absent(rig: Rig) -> None:
    rig.first.script.append(Stream(text_chunks("one", " two")[:-1]))  # no usage chunk
    body = {"model": "up-model", "input": "12345678", "stream": True}
    events = parse_frames(rig.http.post("/v1/responses", json=body).content)
    sent = rig.first.requests[-1]
    assert sent["stream"] is True and sent["stream_options"] == {"include_usage": True}
    usage = events[-1]["response"]["usage"]
    assert (usage["input_tokens"], usage["output_tokens"]) == (2, 2)


PNG_URL = "data:image/png;base64," + base64.b64encode(b"\x89PNG\r\n\x1a\n" + bytes(8)).decode()
"""A (tiny) PNG: image data is checked to be an image before it goes anywhere."""


def test_request_translation(rig: Rig) -> None:
    schema = {"type": "object", "properties": {"a": {"type": "integer"}}, "required": ["a"]}
    rig.sdk.responses.create(
        model="up-model",
        input=[
            {"role": "developer", "content": "Use tools."},
            {"role": "user", "content": [
                {"type": "input_text", "text": "What is here?"},
                {"type": "input_image", "image_url": PNG_URL, "detail": "low"},
            ]},
            {"type": "function_call", "call_id": "call_1", "name": "get_weather", "arguments": "{\"location\":\"Oslo\"}"},
            {"type": "function_call", "call_id": "call_2", "name": "get_weather", "arguments": "{\"location\":\"Rome\"}"},
            {"type": "function_call_output", "call_id": "call_1", "output": "cold"},
            {"type": "function_call_output", "call_id": "call_2", "output": "warm"},
            {"type": "acme:note", "id": "n1", "status": "completed"},
        ],
        tools=[WEATHER_TOOL, {**WEATHER_TOOL, "name": "get_time"}],
        tool_choice={"type": "allowed_tools", "mode": "required", "tools": [{"type": "function", "name": "get_weather"}]},
        parallel_tool_calls=False,
        temperature=0.3,
        top_p=0.9,
        text={"format": {"type": "json_schema", "name": "out", "schema": schema, "strict": True}},
        extra_body={"top_k": 20, "min_p": 0.05, "repetition_penalty": 1.1, "seed": 7, "stop": ["END"],
                    "frequency_penalty": 0.5, "presence_penalty": 0.2},
    )  # fmt: skip
    sent = rig.first.requests[-1]
    assert sent["messages"] == [
        {"role": "system", "content": "Use tools."},
        {"role": "user", "content": [
            {"type": "text", "text": "What is here?"},
            {"type": "image_url", "image_url": {"url": PNG_URL, "detail": "low"}},
        ]},
        {"role": "assistant", "content": None, "tool_calls": [
            {"id": "call_1", "type": "function", "function": {"name": "get_weather", "arguments": "{\"location\":\"Oslo\"}"}},
            {"id": "call_2", "type": "function", "function": {"name": "get_weather", "arguments": "{\"location\":\"Rome\"}"}},
        ]},
        {"role": "tool", "tool_call_id": "call_1", "content": "cold"},
        {"role": "tool", "tool_call_id": "call_2", "content": "warm"},
    ]  # fmt: skip
    assert [tool["function"]["name"] for tool in sent["tools"]] == ["get_weather", "get_time"]  # every definition
    assert sent["tools"][0]["function"]["parameters"] == WEATHER_TOOL["parameters"]
    assert sent["tool_choice"] == {"type": "function", "function": {"name": "get_weather"}}  # the one allowed
    assert sent["parallel_tool_calls"] is False
    assert sent["response_format"] == {
        "type": "json_schema", "json_schema": {"name": "out", "schema": schema, "strict": True}
    }  # fmt: skip
    expected = {"temperature": 0.3, "top_p": 0.9, "top_k": 20, "min_p": 0.05, "repetition_penalty": 1.1, "seed": 7,
                "stop": ["END"], "frequency_penalty": 0.5, "presence_penalty": 0.2}  # fmt: skip
    assert {key: sent[key] for key in expected} == expected


def test_named_tool_choice_and_json_object(rig: Rig) -> None:
    rig.sdk.responses.create(
        model="up-model", input="x", tools=[WEATHER_TOOL], tool_choice={"type": "function", "name": "get_weather"},
        text={"format": {"type": "json_object"}},
    )  # fmt: skip
    sent = rig.first.requests[-1]
    assert sent["tool_choice"] == {"type": "function", "function": {"name": "get_weather"}}
    assert sent["response_format"] == {"type": "json_object"}


def test_streamed_tool_call_arguments_become_function_calls(rig: Rig) -> None:
    def call(index: int, **function: str) -> dict[str, Any]:
        entry: dict[str, Any] = {"index": index, "function": function}
        if "name" in function:
            entry.update(id=f"call_{index}", type="function")
        return {"choices": [{"index": 0, "delta": {"tool_calls": [entry]}}]}

    rig.first.script.append(
        Stream(
            [
                call(0, name="get_weather", arguments=""),
                call(0, arguments='{"loca'),
                call(0, arguments='tion": "Paris"}'),
                call(1, name="get_weather", arguments='{"location": "Lima"}'),
                {"choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}]},
            ]
        )
    )
    raw = rig.http.post("/v1/responses", json={"model": "up-model", "input": "w", "tools": [WEATHER_TOOL],
                                                "stream": True}).content  # fmt: skip
    events = parse_frames(raw)
    deltas = [e["delta"] for e in events if e["type"] == "response.function_call_arguments.delta"]
    assert deltas == ['{"loca', 'tion": "Paris"}', '{"location": "Lima"}']
    final = events[-1]["response"]
    calls = [(o["call_id"], o["name"], json.loads(o["arguments"])["location"]) for o in final["output"]]
    assert calls == [("call_0", "get_weather", "Paris"), ("call_1", "get_weather", "Lima")]
    assert final["status"] == "completed"


def test_max_tool_calls_drops_extra_upstream_calls(rig: Rig) -> None:
    chunks = [
        {"choices": [{"index": 0, "delta": {"tool_calls": [
            {"index": i, "id": f"c{i}", "type": "function", "function": {"name": "get_weather", "arguments": "{}"}}
        ]}}]}
        for i in range(3)
    ]  # fmt: skip
    rig.first.script.append(Stream(chunks))
    reply = rig.sdk.responses.create(model="up-model", input="w", tools=[WEATHER_TOOL], max_tool_calls=1)
    assert [item.type for item in reply.output] == ["function_call"]


def test_reasoning_content_and_think_tags_become_reasoning(rig: Rig) -> None:
    rig.first.script.append(
        Stream(
            [
                {"choices": [{"index": 0, "delta": {"reasoning_content": "First, add."}}]},
                {"choices": [{"index": 0, "delta": {"content": "4"}}]},
                {"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]},
                {"choices": [], "usage": {"prompt_tokens": 5, "completion_tokens": 9,
                                          "completion_tokens_details": {"reasoning_tokens": 8}}},
            ]
        )
    )  # fmt: skip
    reply = rig.sdk.responses.create(model="up-model", input="2+2?")
    reasoning, _message = reply.output
    assert reasoning.type == "reasoning" and reasoning.content is not None
    assert reasoning.content[0].text == "First, add." and reply.output_text == "4"
    assert reply.usage is not None and reply.usage.output_tokens_details.reasoning_tokens == 8
    rig.first.script.append(
        Stream(text_chunks("<thi", "nk>Hmm, ", "carry the one.</th", "ink>\n\nThe answer", " is 4."))
    )
    events = parse_frames(rig.http.post("/v1/responses", json={"model": "up-model", "input": "2+2?",
                                                                 "stream": True}).content)  # fmt: skip
    kinds = [e["type"] for e in events]
    assert "response.reasoning_text.delta" in kinds and "response.output_text.delta" in kinds
    final = events[-1]["response"]
    assert final["output"][0]["content"][0]["text"] == "Hmm, carry the one."
    assert final["output"][1]["content"][0]["text"] == "\n\nThe answer is 4."


REFUSAL = [
    {"choices": [{"index": 0, "delta": {"role": "assistant", "content": None, "refusal": "I can't "}}]},
    {"choices": [{"index": 0, "delta": {"refusal": "help with that."}}]},
    {"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]},
    {"choices": [], "usage": {"prompt_tokens": 6, "completion_tokens": 5}},
]


def test_an_upstream_refusal_is_a_refusal_part_streamed_and_stored(rig: Rig) -> None:
    rig.first.script.append(Stream(REFUSAL))
    events = list(rig.sdk.responses.create(model="up-model", input="Help me pick a lock.", stream=True))
    added = [e for e in events if e.type == "response.content_part.added"]
    assert [e.part.type for e in added] == ["refusal"]
    assert [e.delta for e in events if e.type == "response.refusal.delta"] == ["I can't ", "help with that."]
    [done] = [e for e in events if e.type == "response.refusal.done"]
    assert done.refusal == "I can't help with that." and done.item_id == added[0].item_id
    assert not [e for e in events if e.type.startswith("response.output_text")]
    final = events[-1]
    assert final.type == "response.completed"
    [message] = final.response.output
    assert message.type == "message" and message.content[0].type == "refusal"
    assert rig.sdk.responses.retrieve(final.response.id).output[0].content[0].refusal == "I can't help with that."  # type: ignore[union-attr]
    rig.first.script.append(Stream(REFUSAL))  # a JSON create reads the upstream's whole message
    reply = rig.sdk.responses.create(model="up-model", input="Help me pick a lock.")
    assert reply.output[0].content[0].type == "refusal" and reply.output_text == ""  # type: ignore[union-attr]
    rig.first.script.append(Stream(REFUSAL))  # and a Chat Completions client reads it in its own field
    chat = rig.sdk.chat.completions.create(model="up-model", messages=[{"role": "user", "content": "Lock?"}])
    assert chat.choices[0].message.refusal == "I can't help with that." and chat.choices[0].message.content is None
    rig.first.script.append(Stream(REFUSAL))
    chunks = list(rig.sdk.chat.completions.create(model="up-model", stream=True,
                                                  messages=[{"role": "user", "content": "Lock?"}]))  # fmt: skip
    assert "".join(c.choices[0].delta.refusal or "" for c in chunks if c.choices) == "I can't help with that."


def test_length_finish_is_incomplete(rig: Rig) -> None:
    rig.first.script.append(Stream(text_chunks("cut", " off", finish="length")))
    reply = rig.sdk.responses.create(model="up-model", input="x", max_output_tokens=2)
    assert reply.status == "incomplete"
    assert reply.incomplete_details is not None and reply.incomplete_details.reason == "max_output_tokens"


@pytest.mark.parametrize(
    ("fail", "status", "kind"),
    [(Fail(400, "bad temperature"), 400, "invalid_request_error"),
     (Fail(429, "slow down", {"retry-after": "3"}), 429, "rate_limit_error"),
     (Fail(500, "boom"), 503, "service_unavailable"),
     (Fail(401, "who are you"), 500, "server_error")],
)  # fmt: skip
def test_upstream_errors_map_to_openai_errors(rig: Rig, fail: Fail, status: int, kind: str) -> None:
    rig.first.script.append(fail)
    reply = rig.http.post("/v1/responses", json={"model": "up-model", "input": "x"})
    assert reply.status_code == status
    error = reply.json()["error"]
    assert error["type"] == kind and fail.message in error["message"]
    if status == 429:
        assert reply.headers["retry-after"] == "3"


def test_a_stream_that_breaks_fails_the_response(rig: Rig) -> None:
    rig.first.script.append(Stream(text_chunks("partial")[:1], then_break=True))
    events = parse_frames(
        rig.http.post("/v1/responses", json={"model": "up-model", "input": "x", "stream": True}).content
    )
    assert events[-1]["type"] == "response.failed"
    stored = rig.sdk.responses.retrieve(events[-1]["response"]["id"])
    assert stored.status == "failed" and stored.error is not None


def test_an_error_chunk_mid_stream_fails_the_response_and_keeps_the_text_before_it(rig: Rig) -> None:
    """Text that arrived with the error (often in the same network read) is part of the response."""
    chunks = [*text_chunks("Hello", " wor")[:2], {"error": {"message": "the engine is overloaded"}}]
    rig.first.script.append(Stream(chunks))
    events = parse_frames(
        rig.http.post("/v1/responses", json={"model": "up-model", "input": "x", "stream": True}).content
    )
    assert "".join(e["delta"] for e in events if e["type"] == "response.output_text.delta") == "Hello wor"
    failed = events[-1]
    assert failed["type"] == "response.failed"
    assert "the engine is overloaded" in failed["response"]["error"]["message"]
    stored = rig.sdk.responses.retrieve(failed["response"]["id"])
    assert stored.output[0].type == "message" and stored.output[0].status == "incomplete"
    assert stored.output[0].content[0].text == "Hello wor"  # type: ignore[union-attr]


def test_the_read_that_ends_the_upstream_stream_closes_the_message_in_the_same_write(rig: Rig) -> None:
    """An upstream whose whole stream comes in one read (a fast server, a batch): the message's closing
    events go out in the chunk of its last tokens, not in one of their own; what follows [DONE] is
    ignored."""
    frames = b"".join(b"data: %s\n\n" % json.dumps(chunk).encode() for chunk in text_chunks("Hi", " there"))
    rig.first.script.append(Garbage(frames + b"data: [DONE]\n\ndata: not json\n\n"))
    chunks = http_chunks(rig.server.url, {"model": "up-model", "input": "x", "stream": True})
    last_tokens = next(chunk for chunk in chunks if b"event: response.output_text.delta" in chunk)
    assert b"event: response.output_text.done" in last_tokens
    assert b"event: response.output_item.done" in last_tokens
    events = parse_frames(b"".join(chunks))
    assert events[-1]["type"] == "response.completed"
    assert events[-1]["response"]["output_text"] == "Hi there"
    assert rig.sdk.responses.retrieve(events[-1]["response"]["id"]).output_text == "Hi there"


@pytest.mark.parametrize(
    "garbage",
    [Garbage(b"data: [1, 2, 3]\n\ndata: [DONE]\n\n"), Garbage(b"data: {\"choices\": 7}\n\n"),
     Garbage(b"data: not json\n\n"), Garbage(b"<html>502 Bad Gateway</html>", "text/html")],
)  # fmt: skip
@pytest.mark.parametrize("stream", [True, False])
def test_an_upstream_that_answers_garbage_fails_the_response_clearly(rig: Rig, garbage: Garbage, stream: bool) -> None:
    rig.first.script.append(garbage)
    body = {"model": "up-model", "input": "x", "stream": stream}
    reply = rig.http.post("/v1/responses", json=body)
    if stream:
        last = parse_frames(reply.content)[-1]
        if last["type"] == "response.completed":  # a stream with no chunk at all is an empty answer
            assert garbage.media_type == "text/html" and last["response"]["output"] == []
            return
        assert last["type"] == "response.failed"
        error = last["response"]["error"]
        assert rig.sdk.responses.retrieve(last["response"]["id"]).status == "failed"
    else:
        assert reply.status_code == 500
        error = reply.json()["error"]
    assert error["code"] == "upstream_malformed" and "malformed" in error["message"]


def test_an_upstream_that_goes_silent_fails_after_the_timeout(tmp_path: Path) -> None:
    """Silent before replying: the worker is marked down and the client gets a 503 it may retry;
    silent mid-stream: the response fails with ``upstream_timeout``, keeping what came before."""
    for rig in start_rig(tmp_path, upstream_timeout_secs=0.5, upstream_health_interval_secs=30):
        rig.first.script.append(Stall(3))
        started = time.monotonic()
        reply = rig.http.post("/v1/responses", json={"model": "up-model", "input": "x"})
        assert reply.status_code == 503 and "did not answer within 0.5s" in reply.json()["error"]["message"]
        assert time.monotonic() - started < 2.5

    for rig in start_rig(tmp_path, upstream_timeout_secs=0.5, upstream_health_interval_secs=30):
        chunks = text_chunks("Hello", " world")
        rig.first.script.append(Stream(chunks[:1], stall_after=3))
        events = parse_frames(
            rig.http.post("/v1/responses", json={"model": "up-model", "input": "x", "stream": True}).content
        )
        assert events[-1]["type"] == "response.failed"
        assert events[-1]["response"]["error"]["code"] == "upstream_timeout"
        assert "".join(e["delta"] for e in events if e["type"] == "response.output_text.delta") == "Hello"


def test_connections_are_pooled_and_reused(rig: Rig) -> None:
    for _ in range(20):
        rig.sdk.responses.create(model="up-model", input="x")
    assert len(rig.first.client_ports) == 20
    assert len(set(rig.first.client_ports)) <= 2


def test_cookies_an_upstream_sets_are_not_sent_back(tmp_path: Path) -> None:
    """One client's upstream session cookie must never ride along with another client's request
    (by host name: cookie jars ignore cookies of IP addresses)."""
    with contextmanager(start_rig)(tmp_path, host="localhost") as rig:
        for _ in range(3):
            rig.sdk.responses.create(model="up-model", input="Hi")
        with rig.sdk.responses.stream(model="up-model", input="Hi") as stream:
            stream.get_final_response()
        assert rig.first.cookies == [None, None, None, None]


def test_a_chain_replays_every_turn_and_forgets_a_deleted_one(rig: Rig) -> None:
    """Turn after turn the whole chain reaches the model (from the store's context cache once warm);
    deleting a response in the middle cuts the chain there, as the database says."""

    def sent_texts() -> list[str]:
        return [str(message["content"]) for message in rig.first.requests[-1]["messages"]]

    ids: list[str] = []
    for turn in range(5):
        reply = rig.sdk.responses.create(
            model="up-model", input=f"turn {turn}", previous_response_id=(ids or [None])[-1]
        )
        ids.append(reply.id)
        assert [text for text in sent_texts() if text.startswith("turn")] == [f"turn {t}" for t in range(turn + 1)]
    assert sent_texts().count("hello from upstream") == 4  # each earlier answer, in its place
    rig.sdk.responses.delete(ids[2])
    rig.sdk.responses.create(model="up-model", input="after", previous_response_id=ids[4])
    assert [text for text in sent_texts() if text.startswith(("turn", "after"))] == ["turn 3", "turn 4", "after"]


def test_models_are_listed(rig: Rig) -> None:
    assert "up-model" in [model.id for model in rig.sdk.models.list()]


def test_retry_on_another_worker_before_the_first_byte(tmp_path: Path) -> None:
    for rig in start_rig(tmp_path, workers=2, strategy="round_robin"):
        rig.upstreams[0].script.append(Fail(503, "overloaded"))
        assert rig.sdk.responses.create(model="up-model", input="x").output_text == "hello from upstream"
        assert [len(up.requests) for up in rig.upstreams] == [1, 1]
        # The failed worker is out of rotation until a health check passes.
        for _ in range(3):
            rig.sdk.responses.create(model="up-model", input="x")
        assert [len(up.requests) for up in rig.upstreams] == [1, 4]


def test_round_robin_spreads_requests(tmp_path: Path) -> None:
    for rig in start_rig(tmp_path, workers=2, strategy="round_robin"):
        for _ in range(6):
            rig.sdk.responses.create(model="up-model", input="x")
        assert [len(up.requests) for up in rig.upstreams] == [3, 3]


def test_503_when_no_worker_is_healthy_and_recovery(tmp_path: Path) -> None:
    for rig in start_rig(tmp_path, workers=1, upstream_health_interval_secs=0.2):
        rig.first.healthy = False
        rig.first.script.append(Fail(502, "bad gateway"))
        assert rig.http.post("/v1/responses", json={"model": "up-model", "input": "x"}).status_code == 503
        # Marked down: refused at once without calling the upstream.
        calls = len(rig.first.requests)
        reply = rig.http.post("/v1/responses", json={"model": "up-model", "input": "x"})
        assert reply.status_code == 503 and reply.json()["error"]["code"] == "service_unavailable"
        assert len(rig.first.requests) == calls
        # Healthy again: the health check brings it back.
        rig.first.healthy = True
        deadline = time.monotonic() + 10
        while rig.http.post("/v1/responses", json={"model": "up-model", "input": "x"}).status_code != 200:
            assert time.monotonic() < deadline, "the worker never came back"
            time.sleep(0.05)


def test_unreachable_worker_is_503(tmp_path: Path) -> None:
    model = UpstreamConfig(name="gone", urls=("http://127.0.0.1:9/v1",))
    settings = Settings(db_url=f"sqlite:///{tmp_path / 'u.db'}", models=(model,), embedded=False)
    with serve(settings) as live:
        reply = httpx.post(f"{live.v1}/responses", json={"model": "gone", "input": "x"})
        assert reply.status_code == 503 and reply.json()["error"]["type"] == "service_unavailable"


def test_the_model_file_wins_a_name_clash_with_discovery(tmp_path: Path) -> None:
    with ExitStack() as stack:
        configured, discovered = MockUpstream(), MockUpstream()
        configured_url = f"{stack.enter_context(serve_app(configured.app)).url}/v1"
        discovered_url = f"{stack.enter_context(serve_app(discovered.app)).url}/v1"
        settings = Settings(
            db_url=f"sqlite:///{tmp_path / 'clash.db'}", embedded=False,
            models=(UpstreamConfig(name="up-model", urls=(configured_url,)),), upstreams=(discovered_url,),
        )  # fmt: skip
        live = stack.enter_context(serve(settings))
        for _ in range(3):
            assert httpx.post(f"{live.v1}/responses", json={"model": "up-model", "input": "x"}).status_code == 200
        assert (len(configured.requests), len(discovered.requests)) == (3, 0)


def test_reasoning_context_sends_earlier_reasoning_back_as_reasoning_content(rig: Rig) -> None:
    """``reasoning.context``: ``all_turns`` sends every reasoning item back on the assistant message it
    preceded (a call joins it), ``current_turn`` only those since the last user message, none without."""
    thought = {"type": "reasoning", "summary": [], "content": [{"type": "reasoning_text", "text": "Oslo is north."}]}
    later = {"type": "reasoning", "summary": [{"type": "summary_text", "text": "Check the weather."}]}
    call = {"type": "function_call", "call_id": "call_1", "name": "get_weather", "arguments": "{}"}
    history = [{"role": "user", "content": "Where?"}, thought, {"role": "assistant", "content": "Oslo."},
               {"role": "user", "content": "Weather?"}, later, call,
               {"type": "function_call_output", "call_id": "call_1", "output": "cold"}]  # fmt: skip

    def sent(context: str | None) -> list[dict[str, Any]]:
        reasoning: dict[str, Any] = {} if context is None else {"context": context}
        rig.sdk.responses.create(model="up-model", input=history, tools=[WEATHER_TOOL], reasoning=reasoning)  # type: ignore[arg-type]
        return [message for message in rig.first.requests[-1]["messages"] if message["role"] == "assistant"]

    assert sent("all_turns") == [
        {"role": "assistant", "content": "Oslo.", "reasoning_content": "Oslo is north."},
        {"role": "assistant", "content": "", "reasoning_content": "Check the weather.", "tool_calls": [
            {"id": "call_1", "type": "function", "function": {"name": "get_weather", "arguments": "{}"}}]},
    ]  # fmt: skip
    current = sent("current_turn")
    assert (
        current[0] == {"role": "assistant", "content": "Oslo."}
        and current[1]["reasoning_content"] == "Check the weather."
    )
    assert all("reasoning_content" not in message for message in sent(None))
