"""Moderation: ``POST /v1/moderations`` and a create's ``moderation`` (scores reported, input blocked
before the model reads it, output withheld), by the simulator's moderation model, an upstream's
OpenAI-shaped ``/moderations`` and a guard model answering ``safe``/``unsafe`` by Chat Completions."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import ExitStack
from pathlib import Path
from typing import Any

import httpx
import openai
import pytest

from responsa.config import Settings, UpstreamConfig
from tests.backends.mock_upstream import MockUpstream, Stream, text_chunks
from tests.conftest import LiveServer, serve, serve_app, sqlite_server
from tests.http.test_streaming import parse_frames
from tests.spec import openai_event

MODERATED = {"model": "sim-moderation", "policy": {"input": {"mode": "block"}, "output": {"mode": "score"}}}


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveServer]:
    yield from sqlite_server(tmp_path_factory, "moderation")


def test_the_moderations_route_answers_in_openai_shape(client: openai.OpenAI) -> None:
    judged = client.moderations.create(model="sim-moderation", input=["Good morning!", "I will murder and stab him"])
    assert judged.model == "sim-moderation" and judged.id.startswith("modr-")
    calm, violent = judged.results
    assert not calm.flagged and calm.category_scores.violence == 0
    assert violent.flagged and violent.categories.violence and violent.category_scores.violence == pytest.approx(0.9)
    assert not violent.categories.hate
    default = client.moderations.create(input=[{"type": "text", "text": "launder the money"}])  # the first served
    assert default.model == "sim-moderation" and default.results[0].categories.illicit


def test_unknown_models_and_images_are_a_400_naming_them(client: openai.OpenAI) -> None:
    with pytest.raises(openai.BadRequestError) as caught:
        client.moderations.create(model="omni-moderation-latest", input="hi")
    assert caught.value.param == "model" and "sim-moderation" in caught.value.message
    with pytest.raises(openai.BadRequestError) as caught:
        client.moderations.create(input=[{"type": "image_url", "image_url": {"url": "https://example.com/a.png"}}])
    assert caught.value.param == "input[0]"
    with pytest.raises(openai.BadRequestError) as caught:
        client.responses.create(model="sim", input="hi", moderation={"model": "omni-moderation-latest"})
    assert caught.value.param == "moderation.model" and caught.value.code == "model_not_found"


def test_scores_are_reported_and_nothing_is_blocked_in_score_mode(client: openai.OpenAI) -> None:
    response = client.responses.create(model="sim", input="How do I kill a stuck process?",
                                       moderation={"model": "sim-moderation"})  # fmt: skip
    assert response.status == "completed" and response.output_text
    assert response.moderation is not None
    assert response.moderation.input.type == "moderation_result" and response.moderation.input.flagged
    assert response.moderation.input.categories["violence"] and response.moderation.input.model == "sim-moderation"
    assert response.moderation.output.type == "moderation_result"
    stored = client.responses.retrieve(response.id)
    assert stored.moderation is not None and stored.moderation.input.flagged


def test_blocked_input_never_reaches_the_model(client: openai.OpenAI) -> None:
    response = client.responses.create(model="sim", input="Help me murder my neighbour", moderation=MODERATED)  # type: ignore[arg-type]
    assert response.status == "incomplete" and response.incomplete_details is not None
    assert response.incomplete_details.reason == "content_filter" and response.output == []
    assert response.usage is not None and response.usage.output_tokens == 0
    assert response.moderation is not None and response.moderation.input.flagged
    assert response.moderation.output.type == "error" and response.moderation.output.code == "input_blocked"
    calm = client.responses.create(model="sim", input="Help me plan a garden", moderation=MODERATED)  # type: ignore[arg-type]
    assert calm.status == "completed" and calm.output_text


def test_a_blocked_input_streams_its_end_with_contiguous_numbers(server: LiveServer) -> None:
    body = {"model": "sim", "input": "how to murder", "moderation": MODERATED, "stream": True}
    events = parse_frames(httpx.post(f"{server.v1}/responses", json=body, timeout=30).content)
    assert [event["sequence_number"] for event in events] == list(range(len(events)))
    assert all(openai_event(event).type == event["type"] for event in events)
    assert [event["type"] for event in events] == ["response.created", "response.in_progress", "response.incomplete"]
    assert events[-1]["response"]["moderation"]["input"]["flagged"] is True


@pytest.fixture
def upstream(tmp_path: Path) -> Iterator[tuple[MockUpstream, openai.OpenAI, LiveServer]]:
    """An upstream serving an answering model, an OpenAI-shaped moderation model and a guard model."""
    with ExitStack() as stack:
        mock = MockUpstream(models=("up-model",))
        url = f"{stack.enter_context(serve_app(mock.app)).url}/v1"
        models = (UpstreamConfig("up-model", (url,)), UpstreamConfig("omni", (url,), "omni-moderation-latest",
                  moderation="openai"), UpstreamConfig("guard", (url,), "llama-guard-3", moderation="guard"))  # fmt: skip
        config = Settings(db_url=f"sqlite:///{tmp_path / 'mod.db'}", models=models, embedded=False, simulator=False)
        live = stack.enter_context(serve(config))
        sdk = stack.enter_context(openai.OpenAI(base_url=live.v1, api_key="x", max_retries=0))
        yield mock, sdk, live


def test_an_upstream_moderation_model_is_asked_as_openai_is(upstream: tuple[MockUpstream, Any, LiveServer]) -> None:
    mock, sdk, _ = upstream
    mock.moderation_flags = {"shoplift": "illicit"}
    judged = sdk.moderations.create(model="omni", input=["tips to shoplift", "tips to garden"])
    assert [result.flagged for result in judged.results] == [True, False]
    assert mock.moderation_requests[-1] == {
        "model": "omni-moderation-latest",
        "input": ["tips to shoplift", "tips to garden"],
    }
    assert "omni" not in [model.id for model in sdk.models.list()]  # it moderates; it does not answer


def test_an_upstream_output_that_the_guard_flags_is_withheld(upstream: tuple[MockUpstream, Any, LiveServer]) -> None:
    mock, _, live = upstream
    policy = {"model": "guard", "policy": {"input": {"mode": "block"}, "output": {"mode": "block"}}}
    mock.script += [Stream(text_chunks("safe")), Stream(text_chunks("Step one: build a pipe bomb")),
                    Stream(text_chunks("unsafe\nS9"))]  # fmt: skip
    body = {"model": "up-model", "input": "How do I clear a drain?", "moderation": policy, "stream": True}
    events = parse_frames(httpx.post(f"{live.v1}/responses", json=body, timeout=30).content)
    kinds = [event["type"] for event in events]
    assert "response.output_text.delta" not in kinds  # nothing of the withheld output was sent
    assert kinds == ["response.created", "response.in_progress", "response.incomplete"]
    assert [event["sequence_number"] for event in events] == [0, 1, 2]
    end = events[-1]["response"]
    assert end["incomplete_details"] == {"reason": "content_filter"} and end["output"] == []
    assert end["moderation"]["output"]["categories"]["illicit/violent"] is True
    assert end["moderation"]["input"]["flagged"] is False
    guard_asks = [request for request in mock.requests if request["model"] == "llama-guard-3"]
    assert [ask["messages"][-1]["content"] for ask in guard_asks] == ["How do I clear a drain?",
                                                                      "Step one: build a pipe bomb"]  # fmt: skip
    # Passed, the held output arrives whole, numbered without gaps.
    mock.script += [Stream(text_chunks("safe")), Stream(text_chunks("Use a plunger.")), Stream(text_chunks("safe"))]
    events = parse_frames(httpx.post(f"{live.v1}/responses", json=body, timeout=30).content)
    assert [event["sequence_number"] for event in events] == list(range(len(events)))
    assert events[-1]["type"] == "response.completed" and events[-1]["response"]["output"]
    assert any(event["type"] == "response.output_text.delta" for event in events)


def test_a_guard_that_cannot_answer_blocks_in_block_mode(upstream: tuple[MockUpstream, Any, LiveServer]) -> None:
    mock, sdk, _ = upstream
    mock.script.append(Stream(text_chunks("I am not sure what you mean.")))  # not a verdict
    response = sdk.responses.create(model="up-model", input="Hello", moderation={"model": "guard", "policy": {
        "input": {"mode": "block"}}})  # fmt: skip
    assert response.status == "incomplete" and response.moderation is not None
    assert response.moderation.input.type == "error" and response.moderation.input.code == "moderation_failed"
