"""Compaction (``/responses/compact`` and compaction items as input) and ``/responses/input_tokens``,
through the openai SDK, on the simulator, the embedded model and an upstream."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import openai
import pytest

from responsa.backends.llama_cpp import DEFAULT_MODEL_NAME
from tests.backends.mock_upstream import Stream, text_chunks
from tests.backends.test_chat_completions import Rig, start_rig
from tests.conftest import LiveServer, sqlite_server
from tests.http.test_streaming import WEATHER_TOOL, parse_frames
from tests.spec import spec

HISTORY: list[Any] = [
    {"role": "user", "content": "We agreed to launch on Tuesday and notify support first."},
    {"role": "assistant", "content": "Understood. The launch is Tuesday, with support notified beforehand."},
    {"role": "user", "content": "Also, the budget is 4,000 euros."},
]


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveServer]:
    """One SQLite server (the store suite covers PostgreSQL): conftest's ``client`` talks to it."""
    yield from sqlite_server(tmp_path_factory, "compaction")


@pytest.fixture
def rig(tmp_path: Path) -> Iterator[Rig]:
    yield from start_rig(tmp_path)


def test_compact_keeps_user_messages_and_adds_exactly_one_compaction_item(client: openai.OpenAI) -> None:
    compacted = client.responses.compact(model="sim", input=HISTORY)
    assert compacted.object == "response.compaction"
    kinds = [item.type for item in compacted.output]
    assert kinds == ["message", "message", "compaction"]
    assert [item.role for item in compacted.output if item.type == "message"] == ["user", "user"]
    sealed = compacted.output[-1]
    assert sealed.type == "compaction" and sealed.id.startswith("cmp_")
    assert "Tuesday" not in sealed.encrypted_content  # opaque, not merely encoded
    assert compacted.usage.input_tokens > 0 and compacted.usage.output_tokens > 0
    assert spec().validate(compacted.to_dict(warnings=False), "CompactResource") == []


def test_compact_needs_a_model(server: LiveServer) -> None:
    reply = httpx.post(f"{server.v1}/responses/compact", json={"input": "hello"})
    assert reply.status_code == 400
    assert reply.json()["error"]["param"] == "model"


def test_compact_follows_previous_response_id(client: openai.OpenAI) -> None:
    first = client.responses.create(model="sim", input="Remember: the code word is heliotrope.")
    compacted = client.responses.compact(model="sim", previous_response_id=first.id, input="And the colour is teal.")
    texts = [item.content[0].text for item in compacted.output if item.type == "message"]
    assert texts == ["Remember: the code word is heliotrope.", "And the colour is teal."]


def test_a_compaction_item_round_trips_and_stays_stored_as_sent(client: openai.OpenAI) -> None:
    compacted = client.responses.compact(model="sim", input=HISTORY)
    items = [item.to_dict(warnings=False) for item in compacted.output]
    follow = client.responses.create(model="sim", input=[*items, {"role": "user", "content": "When is the launch?"}])
    assert follow.status == "completed"
    stored = client.responses.input_items.list(follow.id, order="asc").data
    assert [item.type for item in stored] == ["message", "message", "compaction", "message"]
    assert stored[2].to_dict(warnings=False)["encrypted_content"] == items[2]["encrypted_content"]
    chained = client.responses.create(model="sim", previous_response_id=follow.id, input="And the budget?")
    assert chained.status == "completed"


def test_an_altered_compaction_item_is_a_400(client: openai.OpenAI) -> None:
    compacted = client.responses.compact(model="sim", input=HISTORY)
    sealed = compacted.output[-1].to_dict(warnings=False)
    token = sealed["encrypted_content"]
    sealed["encrypted_content"] = token[:-6] + ("A" if token[-6] != "A" else "B") + token[-5:]
    with pytest.raises(openai.BadRequestError) as caught:
        client.responses.create(model="sim", input=[sealed, {"role": "user", "content": "Go on."}])
    assert caught.value.code == "invalid_encrypted_content"


def test_the_upstream_model_writes_the_summary_and_later_turns_read_it(rig: Rig) -> None:
    rig.first.script.append(Stream(text_chunks("Launch Tuesday; ", "notify support first; budget 4,000 EUR.")))
    compacted = rig.sdk.responses.compact(model="up-model", input=HISTORY)
    asked = rig.first.requests[-1]
    assert "compact" in asked["messages"][0]["content"].lower()  # the summary instructions
    assert "notify support first" in asked["messages"][-1]["content"]  # the transcript
    items = [item.to_dict(warnings=False) for item in compacted.output]
    rig.sdk.responses.create(model="up-model", input=[items[-1], {"role": "user", "content": "When is the launch?"}])
    seen = rig.first.requests[-1]["messages"]
    assert any("Launch Tuesday; notify support first; budget 4,000 EUR." in str(m["content"]) for m in seen)
    assert seen[-1] == {"role": "user", "content": "When is the launch?"}


def test_the_embedded_model_writes_a_summary(client: openai.OpenAI) -> None:
    compacted = client.responses.compact(model=DEFAULT_MODEL_NAME, input=HISTORY)
    assert [item.type for item in compacted.output][-1] == "compaction"
    assert compacted.usage.output_tokens > 0
    question = {"role": "user", "content": "When is the launch?"}
    sealed = compacted.output[-1].to_dict(warnings=False)
    follow = client.responses.create(model=DEFAULT_MODEL_NAME, input=[sealed, question], max_output_tokens=8)
    assert follow.usage is not None and follow.usage.input_tokens > 20  # the summary reached the model


@pytest.mark.parametrize("model", ["sim", DEFAULT_MODEL_NAME])
def test_input_tokens_match_what_a_create_uses(client: openai.OpenAI, model: str) -> None:
    body: dict[str, Any] = {"model": model, "input": HISTORY, "instructions": "Be brief.", "tools": [WEATHER_TOOL]}
    counted = client.responses.input_tokens.count(**body)
    assert counted.object == "response.input_tokens"
    created = client.responses.create(**body, max_output_tokens=4)
    assert created.usage is not None
    assert counted.input_tokens == created.usage.input_tokens


def test_input_tokens_without_a_model_counts_with_the_first_model(client: openai.OpenAI) -> None:
    assert client.responses.input_tokens.count(input="Hello there").input_tokens > 0


def test_input_tokens_ask_the_upstream_tokenizer_or_estimate(rig: Rig) -> None:
    rig.first.token_count = 321
    assert rig.sdk.responses.input_tokens.count(model="up-model", input=HISTORY).input_tokens == 321
    assert rig.first.tokenize_requests[-1]["messages"][-1]["content"] == "Also, the budget is 4,000 euros."
    rig.first.token_count = None  # no /tokenize: about four characters a token
    estimate = rig.sdk.responses.input_tokens.count(model="up-model", input=HISTORY).input_tokens
    assert 30 < estimate < 120


def test_a_create_over_the_threshold_compacts_first_into_exactly_one_item(server: LiveServer) -> None:
    body = {"model": "sim", "input": [*HISTORY, {"role": "user", "content": "What is the plan?"}],
            "context_management": [{"type": "compaction", "compact_threshold": 20}], "stream": True}  # fmt: skip
    events = parse_frames(httpx.post(f"{server.v1}/responses", json=body, timeout=30).content)
    final = events[-1]["response"]
    kinds = [item["type"] for item in final["output"]]
    assert kinds[0] == "compaction" and kinds.count("compaction") == 1 and kinds[-1] == "message"
    (compacting,) = [e for e in events if e["type"] == "response.compaction.compacting"]
    assert compacting["item_id"] == final["output"][0]["id"] and compacting["output_index"] == 0
    assert [e["sequence_number"] for e in events] == list(range(len(events)))

    below = httpx.post(f"{server.v1}/responses", json={**body, "stream": False,
                       "context_management": [{"type": "compaction", "compact_threshold": 100_000}]}).json()  # fmt: skip
    assert [item["type"] for item in below["output"]] == ["message"]


def test_after_a_compaction_in_a_create_later_turns_read_the_summary_not_the_history(rig: Rig) -> None:
    rig.first.script.extend([Stream(text_chunks("Launch Tuesday; budget 4,000 EUR.")),
                             Stream(text_chunks("The plan: launch Tuesday.")),
                             Stream(text_chunks("Yes."))])  # fmt: skip
    first = rig.sdk.responses.create(model="up-model", input=[*HISTORY, {"role": "user", "content": "The plan?"}],  # type: ignore[list-item]
                                     extra_body={"context_management": [{"type": "compaction", "compact_threshold": 10}]})  # fmt: skip
    assert [item.type for item in first.output] == ["compaction", "message"]
    answering = rig.first.requests[1]["messages"]
    assert "Launch Tuesday; budget 4,000 EUR." in answering[0]["content"]
    assert answering[-1]["content"] == "The plan?" and len(answering) == 2  # the summary, then the question

    rig.sdk.responses.create(model="up-model", previous_response_id=first.id, input="Confirmed?")
    later = rig.first.requests[2]["messages"]
    assert "Launch Tuesday; budget 4,000 EUR." in later[0]["content"]
    assert not any("We agreed to launch" in str(m["content"]) for m in later)  # the history it replaced
    assert [m["role"] for m in later][-2:] == ["assistant", "user"]
