"""Behaviours the seed servers document that responsa got wrong (issue 55), each through the HTTP API:
background with storage off, a reasoning summary from a thinking model's reasoning, encrypted reasoning
asked at retrieve, ``call_id`` on argument deltas, ``completed_at`` only when completed, and the param
of a Chat-Completions-shaped ``tool_choice`` without a name."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import openai
import pytest

from responsa.backends.llama_cpp import DEFAULT_MODEL_NAME, PACKAGED_MAX_OUTPUT_TOKENS
from tests.backends.mock_upstream import Stream
from tests.backends.test_chat_completions import Rig, start_rig
from tests.conftest import LiveServer, sqlite_server
from tests.http.test_encrypted_reasoning import next_turn, reasoning_of, transformations
from tests.http.test_streaming import WEATHER_TOOL, http_chunks, parse_frames
from tests.spec import openai_event


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveServer]:
    yield from sqlite_server(tmp_path_factory, "seed-rows")


@pytest.fixture
def rig(tmp_path: Path) -> Iterator[Rig]:
    yield from start_rig(tmp_path)


def test_background_with_storage_off_is_a_400_as_store_false_is(tmp_path_factory: pytest.TempPathFactory) -> None:
    for live in sqlite_server(tmp_path_factory, "no-store", responses_store_max_entries=0):
        with openai.OpenAI(base_url=live.v1, api_key="-", max_retries=0) as client:
            with pytest.raises(openai.BadRequestError) as caught:
                client.responses.create(model="sim", input="Hello", background=True)
            assert caught.value.param == "background"
            assert client.responses.create(model="sim", input="Hello").status == "completed"  # the rest works


THINKING = [
    {"choices": [{"index": 0, "delta": {"reasoning_content": "Two and two "}}]},
    {"choices": [{"index": 0, "delta": {"reasoning_content": "make four."}}]},
    {"choices": [{"index": 0, "delta": {"content": "4"}}]},
    {"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]},
]


def test_a_thinking_upstream_gives_a_summary_when_one_is_asked(rig: Rig) -> None:
    rig.first.script.append(Stream(THINKING))
    body = {"model": "up-model", "input": "2+2?", "stream": True, "reasoning": {"summary": "auto"}}
    events = parse_frames(rig.http.post("/v1/responses", json=body).content)
    assert all(openai_event(event).type == event["type"] for event in events)
    kinds = [event["type"] for event in events]
    order = ["response.reasoning_summary_part.added", "response.reasoning_summary_text.delta",
             "response.reasoning_summary_text.done", "response.reasoning_summary_part.done"]  # fmt: skip
    assert [kind for kind in kinds if kind in order] == order
    reasoning = events[-1]["response"]["output"][0]
    assert reasoning["summary"] == [{"type": "summary_text", "text": "Two and two make four."}]
    assert reasoning["content"][0]["text"] == "Two and two make four."
    rig.first.script.append(Stream(THINKING))
    unasked = rig.sdk.responses.create(model="up-model", input="2+2?")
    assert unasked.output[0].type == "reasoning" and unasked.output[0].summary == []


def test_encrypted_reasoning_can_be_asked_at_retrieve(client: openai.OpenAI) -> None:
    created = client.responses.create(model="o4-mini", input="Plan it.", reasoning={"effort": "low"})
    assert reasoning_of(created).get("encrypted_content") is None
    retrieved = client.responses.retrieve(created.id, include=["reasoning.encrypted_content"])
    sealed = reasoning_of(retrieved)
    assert sealed["encrypted_content"].startswith("rsa1.") and "Plan" not in sealed["encrypted_content"]
    follow = client.responses.create(model="o4-mini", input=next_turn(sealed), store=False)
    assert transformations(follow) == []  # this server opens it: the model read it
    assert reasoning_of(client.responses.retrieve(created.id)).get("encrypted_content") is None


def test_argument_deltas_carry_the_call_id(server: LiveServer) -> None:
    body = {"model": "sim", "input": "What is the weather in Paris?", "tools": [WEATHER_TOOL], "stream": True}
    events = parse_frames(b"".join(http_chunks(server.url, body)))
    (call,) = [event["item"] for event in events if event["type"] == "response.output_item.done"]
    deltas = [event for event in events if event["type"] == "response.function_call_arguments.delta"]
    assert deltas and {delta["call_id"] for delta in deltas} == {call["call_id"]}
    assert all(openai_event(delta).type == delta["type"] for delta in deltas)


def test_completed_at_is_set_only_on_completed_responses(client: openai.OpenAI) -> None:
    cut = client.responses.create(model="sim", input="Tell me a long story about the sea.", max_output_tokens=3)
    assert cut.status == "incomplete" and cut.completed_at is None
    assert client.responses.retrieve(cut.id).completed_at is None
    done = client.responses.create(model="sim", input="Hi")
    assert done.status == "completed" and done.completed_at is not None


@pytest.mark.parametrize(
    ("body", "param"),
    [
        ({"tool_choice": {"type": "function", "function": {}}}, "tool_choice.function.name"),
        ({"tools": [{"type": "function", "function": {"parameters": {}}}]}, "tools[0].function.name"),
    ],
)
def test_a_chat_shaped_function_without_a_name_names_the_nested_field(
    client: openai.OpenAI, body: dict[str, Any], param: str
) -> None:
    with pytest.raises(openai.BadRequestError) as caught:
        client.responses.create(model="sim", input="Hi", **body)
    assert caught.value.param == param and caught.value.code == "missing_required_parameter"


@pytest.mark.parametrize("name", ["num_assistant_tokens", "assistant_confidence_threshold", "max_ngram_size"])
def test_speculative_decoding_controls_are_a_400_naming_them(client: openai.OpenAI, name: str) -> None:
    with pytest.raises(openai.BadRequestError) as caught:
        client.responses.create(model="sim", input="Hi", extra_body={name: 3})
    assert caught.value.param == name and caught.value.code == "unsupported_parameter"


@pytest.mark.parametrize(
    ("body", "param"),
    [({"max_output_tokens": 0}, "max_output_tokens"), ({"metadata": {f"k{n}": "v" for n in range(17)}}, "metadata")],
)
def test_mlxcel_bounds_are_400s_naming_the_field(client: openai.OpenAI, body: dict[str, Any], param: str) -> None:
    with pytest.raises(openai.BadRequestError) as caught:
        client.responses.create(model="sim", input="Hi", **body)
    assert caught.value.param == param


def test_developer_and_system_messages_are_system_turns_and_reasoning_input_is_not_read(rig: Rig) -> None:
    rig.sdk.responses.create(model="up-model", input=[  # type: ignore[arg-type]
        {"role": "developer", "content": "Answer in French."},
        {"type": "message", "role": "system", "content": [{"type": "input_text", "text": "Be brief."}]},
        {"type": "reasoning", "id": "rs_1", "summary": [], "content": [{"type": "reasoning_text", "text": "hmm"}]},
        {"role": "user", "content": "Hello"},
    ])  # fmt: skip
    sent = rig.first.requests[-1]["messages"]
    assert [(message["role"], message["content"]) for message in sent] == [
        ("system", "Answer in French."), ("system", "Be brief."), ("user", "Hello")]  # fmt: skip


def test_with_response_storage_off_ids_cannot_be_retrieved_or_chained(tmp_path_factory: pytest.TempPathFactory) -> None:
    for live in sqlite_server(tmp_path_factory, "no-store-ids", responses_store_max_entries=0):
        with openai.OpenAI(base_url=live.v1, api_key="-", max_retries=0) as client:
            made = client.responses.create(model="sim", input="Hello")
            assert made.store is False  # storage off acts as store: false, and says so
            with pytest.raises(openai.NotFoundError):
                client.responses.retrieve(made.id)
            with pytest.raises(openai.NotFoundError) as caught:
                client.responses.create(model="sim", input="Again", previous_response_id=made.id)
            assert caught.value.code == "previous_response_not_found"
            with pytest.raises(openai.NotFoundError):
                client.responses.delete(made.id)


def test_top_k_is_honoured_by_the_embedded_model_with_ovms_values(client: openai.OpenAI) -> None:
    def text(top_k: int) -> str:
        response = client.responses.create(model=DEFAULT_MODEL_NAME, input="Name a colour.", temperature=1.0,
                                           max_output_tokens=12, extra_body={"top_k": top_k})  # fmt: skip
        return response.output_text

    assert text(1) == text(1)  # one candidate: greedy, whatever the temperature
    assert text(-1)  # -1: every token considered, as OVMS reads it


def test_top_k_zero_considers_every_token_as_minus_one_does(client: openai.OpenAI) -> None:
    def text(top_k: int, seed: int) -> str:
        response = client.responses.create(model=DEFAULT_MODEL_NAME, input="Name a colour.", temperature=2.0,
                                           max_output_tokens=8, extra_body={"top_k": top_k, "seed": seed, "min_p": 0.0})  # fmt: skip
        return response.output_text

    seeds = range(1, 5)
    uncut = [text(0, seed) for seed in seeds]
    assert uncut == [text(-1, seed) for seed in seeds]  # no cut at all
    assert uncut != [text(40, seed) for seed in seeds]  # not the default of 40


def test_sglang_request_defaults_are_echoed(client: openai.OpenAI) -> None:
    made = client.responses.create(model="sim", input="Hello", user="u-7")
    assert (made.store, made.parallel_tool_calls, made.tool_choice) == (True, True, "auto")
    assert (made.temperature, made.top_p, made.user) == (1.0, 1.0, "u-7")
    assert client.responses.retrieve(made.id).model_dump() == made.model_dump()  # stored by default


def test_an_mcp_tool_written_as_sglang_writes_it_runs_and_is_echoed(client: openai.OpenAI) -> None:
    tool = {"type": "mcp", "server_url": "http://localhost:8080/mcp", "server_label": "my-mcp-server",
            "server_description": "My MCP server for data access", "require_approval": "never",
            "allowed_tools": ["query_database", "search_files"]}  # fmt: skip
    made = client.responses.create(model="sim", input="Query the database for users", tools=[tool])  # type: ignore[list-item]
    assert made.status == "completed" and made.output[0].type == "mcp_list_tools"
    assert {listed.name for listed in made.output[0].tools} <= {"query_database", "search_files"}
    echoed = made.tools[0]
    assert echoed.type == "mcp" and echoed.server_description == "My MCP server for data access"
    assert (echoed.require_approval, echoed.allowed_tools) == ("never", ["query_database", "search_files"])


def test_sampling_extensions_reach_an_upstream_only_when_sent(rig: Rig) -> None:
    rig.sdk.responses.create(model="up-model", input="Write a story")
    sent = rig.first.requests[-1]
    assert not {"top_k", "min_p", "repetition_penalty", "stop"} & sent.keys()  # the upstream's own defaults


def data_lines(raw: bytes) -> list[bytes]:
    return [line.removeprefix(b"data: ") for line in raw.split(b"\n") if line.startswith(b"data: {")]


def assert_obfuscated(raw: bytes) -> None:
    """Every delta event carries ``obfuscation`` padding its JSON to a multiple of 64 bytes; no other does."""
    events = parse_frames(raw)
    deltas = [data for data in data_lines(raw) if json.loads(data)["type"].endswith(".delta")]
    assert deltas and all(len(data) % 64 == 0 for data in deltas)
    for event in events:
        assert ("obfuscation" in event) == event["type"].endswith(".delta")
        assert openai_event(event).type == event["type"]  # the SDK reads past it
    text = "".join(event["delta"] for event in events if event["type"] == "response.output_text.delta")
    assert text == events[-1]["response"]["output"][0]["content"][0]["text"]


def test_stream_obfuscation_is_honoured_when_asked(server: LiveServer) -> None:
    body = {"model": "sim", "input": "Tell me about the sea.", "stream": True}
    plain = b"".join(http_chunks(server.url, body))
    assert b'"obfuscation"' not in plain  # off unless asked (docs/api.md says why)
    asked = {**body, "stream_options": {"include_obfuscation": True}}
    assert_obfuscated(b"".join(http_chunks(server.url, asked)))
    with httpx.Client(base_url=server.v1, timeout=30) as http:
        queued = http.post("/responses", json={**asked, "background": True})
        assert_obfuscated(queued.content)
        response_id = parse_frames(queued.content)[0]["response"]["id"]
        replayed = http.get(f"/responses/{response_id}", params={"stream": "true", "include_obfuscation": "true"})
        assert_obfuscated(replayed.content)
        bad = http.post("/responses", json={**body, "stream_options": {"include_obfuscation": "yes"}})
        assert bad.status_code == 400 and bad.json()["error"]["param"] == "stream_options.include_obfuscation"
        bad = http.get(f"/responses/{response_id}", params={"stream": "true", "include_obfuscation": "maybe"})
        assert bad.status_code == 400 and bad.json()["error"]["param"] == "include_obfuscation"


def test_the_embedded_models_cap_is_echoed_when_none_is_asked(client: openai.OpenAI) -> None:
    made = client.responses.create(model=DEFAULT_MODEL_NAME, input="Say hi.", temperature=0)
    assert made.max_output_tokens == PACKAGED_MAX_OUTPUT_TOKENS  # OVMS's max_tokens_limit, shown
    assert made.usage is not None and made.usage.output_tokens <= PACKAGED_MAX_OUTPUT_TOKENS
    assert client.responses.create(model="sim", input="Say hi.").max_output_tokens is None


def test_a_structural_tag_format_is_a_400_naming_it(client: openai.OpenAI) -> None:
    tag = {"type": "structural_tag", "structures": [{"begin": "<f>", "schema": {}, "end": "</f>"}], "triggers": ["<f>"]}
    with pytest.raises(openai.BadRequestError) as caught:
        client.responses.create(model="sim", input="Hi", extra_body={"response_format": tag})
    assert caught.value.param == "text.format"
