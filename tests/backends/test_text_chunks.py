"""A stream's text-only chunks read by their learnt shape: never a text that parsing the chunk would not give."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson
import pytest
from hypothesis import given
from hypothesis import strategies as st

from responsa.backends.chat_completions._text_chunks import TextChunks
from tests.backends.mock_upstream import Stream
from tests.backends.test_chat_completions import Rig, start_rig

VLLM_HEAD = {"id": "chatcmpl-7", "object": "chat.completion.chunk", "created": 1764200000, "model": "served"}


def vllm_chunk(text: str, field: str = "content", **choice: Any) -> dict[str, Any]:
    delta = {field: text}
    return {**VLLM_HEAD, "choices": [{"index": 0, "delta": delta, "logprobs": None, "finish_reason": None, **choice}]}


def payload(chunk: dict[str, Any], spaced: bool = False) -> bytes:
    """A chunk as an upstream writes it after ``data:`` (with the space, as most do)."""
    return b" " + (json.dumps(chunk).encode() if spaced else orjson.dumps(chunk))


def learnt(first: dict[str, Any], spaced: bool = False) -> TextChunks:
    shape = TextChunks()
    shape.learn(payload(first, spaced), first)
    return shape


def test_the_chunks_after_the_first_are_read_by_their_shape() -> None:
    shape = learnt(vllm_chunk(" Hello"))
    for text in (" world", 'a "quoted" \\ word', "é ✓ 🙂", "\u2028", "</think>", '{"content": 1}'):
        assert shape.text(payload(vllm_chunk(text))) == text


def sglang_chunk(text: str, field: str = "content") -> dict[str, Any]:
    """SGLang writes every field of the delta in each chunk, null where it has nothing."""
    delta: dict[str, Any] = {"role": None, "content": None, "reasoning_content": None, "tool_calls": None, field: text}
    choice = {"index": 0, "delta": delta, "logprobs": None, "finish_reason": None, "matched_stop": None}
    return {**VLLM_HEAD, "choices": [choice], "usage": None}


def test_chunks_whose_other_fields_are_null_are_read_by_their_shape() -> None:
    for field in ("content", "reasoning_content"):
        shape = learnt(sglang_chunk("Hi", field))
        assert shape.field == field and shape.text(payload(sglang_chunk(" there", field))) == " there"
    with_role = sglang_chunk("Hi")
    with_role["choices"][0]["delta"]["role"] = "assistant"
    assert learnt(with_role).text(payload(sglang_chunk(" there"))) is None  # two fields given: parsed whole


def test_spaced_json_is_learnt_too() -> None:
    shape = learnt(vllm_chunk("Hi"), spaced=True)
    assert shape.text(payload(vllm_chunk(" there"), spaced=True)) == " there"


def test_chunks_of_another_shape_are_left_to_the_parser() -> None:
    shape = learnt(vllm_chunk(" Hello"))
    others = [
        vllm_chunk("", finish_reason="stop"),
        vllm_chunk("x", logprobs={"content": []}),
        {**vllm_chunk("x"), "usage": {"prompt_tokens": 1}},
        {**VLLM_HEAD, "choices": []},
        {**VLLM_HEAD, "choices": [{"index": 0, "delta": {"content": "x", "role": "assistant"}}]},
    ]
    for chunk in others:
        assert shape.text(payload(chunk)) is None


def test_bytes_that_are_not_one_string_between_the_head_and_tail_are_left_to_the_parser() -> None:
    first = vllm_chunk("HOLE")
    shape = learnt(first)
    head, _, tail = payload(first).partition(b'"HOLE"')
    for middle in (b'"a","role":"assistant"', b"1", b"null", b'["a"]', b'"a" "b"', b'"unterminated', b""):
        assert shape.text(head + middle + tail) is None


def test_nothing_is_learnt_from_a_chunk_whose_text_is_not_only_its_content() -> None:
    chunk = {**VLLM_HEAD, "model": " same", "choices": [{"index": 0, "delta": {"content": " same"}}]}
    shape = learnt(chunk)  # the text's bytes appear twice: no shape
    assert shape.text(payload({**chunk, "choices": [{"index": 0, "delta": {"content": "x"}}]})) is None


def test_nothing_is_learnt_where_the_text_is_found_in_another_field() -> None:
    # The text written escaped where it is, and as orjson writes it in another field: the bytes found
    # once are not the text's, and the probe put there reads back as the model, not the content.
    data = b' {"model":"\xc3\xa9","choices":[{"index":0,"delta":{"content":"\\u00e9"}}]}'
    shape = TextChunks()
    shape.learn(data, orjson.loads(data))
    assert shape.text(b' {"model":"x","choices":[{"index":0,"delta":{"content":"\\u00e9"}}]}') is None
    assert shape.text(data) is None


def test_reasoning_then_the_answer_are_each_read_by_their_shape() -> None:
    shape = TextChunks()
    for field in ("reasoning_content", "content", "reasoning"):
        first = vllm_chunk("Let me see", field)
        shape.learn(payload(first), first)
        assert shape.field == field and shape.text(payload(vllm_chunk(" then", field))) == " then"


def test_a_chunk_of_the_learnt_field_that_the_shape_misses_stops_the_learning() -> None:
    shape = learnt(vllm_chunk("one"))
    padded = {**vllm_chunk(" two"), "obfuscation": "pp"}
    shape.learn(payload(padded), padded)
    assert shape.text(payload(vllm_chunk(" three"))) is None
    shape.learn(payload(vllm_chunk(" four")), vllm_chunk(" four"))
    assert shape.text(payload(vllm_chunk(" five"))) is None


def test_an_upstream_that_varies_its_chunks_is_parsed_whole() -> None:
    padded = [{**vllm_chunk(text), "obfuscation": "p" * len(text)} for text in ("one", " two", " three")]
    shape = TextChunks()
    for chunk in padded:
        data = payload(chunk)
        assert shape.text(data) is None
        shape.learn(data, chunk)


@given(st.text(min_size=1), st.lists(st.binary(max_size=40) | st.text().map(lambda t: orjson.dumps(t)), max_size=20))
def test_a_text_read_by_the_shape_is_what_parsing_the_chunk_gives(first_text: str, middles: list[bytes]) -> None:
    first = vllm_chunk(first_text)
    shape = learnt(first)
    head, tail = (
        payload(first).split(orjson.dumps(first_text), 1) if orjson.dumps(first_text) in payload(first) else (b"", b"")
    )
    for middle in middles:
        data = head + middle + tail
        text = shape.text(data)
        if text is not None:
            assert orjson.loads(data) == vllm_chunk(text)


@pytest.fixture
def rig(tmp_path: Path) -> Iterator[Rig]:
    yield from start_rig(tmp_path)


def test_a_stream_of_one_shape_reaches_the_client_token_by_token(rig: Rig) -> None:
    texts = ["Hello", ', "world"', " \\ é ✓", "\u2028", " and", " more"]
    chunks = [vllm_chunk(text) for text in texts[:3]]
    chunks.append({**VLLM_HEAD, "choices": [{"index": 0, "delta": {"role": "assistant", "content": texts[3]}}]})
    chunks += [vllm_chunk(text) for text in texts[4:]]
    chunks.append(vllm_chunk("", finish_reason="stop"))
    chunks.append({**VLLM_HEAD, "choices": [], "usage": {"prompt_tokens": 5, "completion_tokens": len(texts)}})
    rig.first.script.append(Stream(chunks))
    with rig.sdk.responses.stream(model="up-model", input="Say it") as stream:
        deltas = [event.delta for event in stream if event.type == "response.output_text.delta"]
        final = stream.get_final_response()
    assert deltas == texts
    assert final.output_text == "".join(texts)
    assert final.usage is not None and final.usage.output_tokens == len(texts)


def test_a_reasoning_model_streams_its_reasoning_and_answer_through_their_shapes(rig: Rig) -> None:
    thoughts, answer = ["Two", " and two", ' make \\"4\\"'], ["It", " is", " 4."]
    chunks = [vllm_chunk(text, "reasoning_content") for text in thoughts] + [vllm_chunk(text) for text in answer]
    chunks.append(vllm_chunk("", finish_reason="stop"))
    rig.first.script.append(Stream(chunks))
    with rig.sdk.responses.stream(model="up-model", input="2+2?") as stream:
        kinds = [(event.type, getattr(event, "delta", None)) for event in stream]
        final = stream.get_final_response()
    assert [delta for kind, delta in kinds if kind == "response.reasoning_text.delta"] == thoughts
    assert [delta for kind, delta in kinds if kind == "response.output_text.delta"] == answer
    reasoning = final.output[0]
    assert reasoning.type == "reasoning" and reasoning.content is not None
    assert reasoning.content[0].text == "".join(thoughts) and final.output_text == "".join(answer)
