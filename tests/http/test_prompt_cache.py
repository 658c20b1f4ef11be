"""``prompt_cache_options`` and ``prompt_cache_key``: the options echoed as applied, the diagnosis against a
stored response, prewarming, explicit mode without breakpoints, and a key routed to the upstream worker
that holds its prefix."""

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
from tests.http.test_streaming import WEATHER_TOOL

HISTORY: list[Any] = [
    {"role": "user", "content": "Our launch is on Tuesday at 9:00 in the Orchid room."},
    {"role": "assistant", "content": "Noted: Tuesday, 9:00, Orchid room."},
]


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveServer]:
    yield from sqlite_server(tmp_path_factory, "prompt-cache")


def compare(client: openai.OpenAI, to: str, **body: Any) -> dict[str, Any]:
    response = client.responses.create(model="sim", prompt_cache_options={"comparison_response_id": to}, **body)
    assert response.prompt_cache_options is not None and response.prompt_cache_options.comparison_response_id == to
    diagnostics = response.to_dict(warnings=False)["prompt_cache_diagnostics"]
    assert response.prompt_cache_diagnostics is not None  # the SDK's own union type parsed it
    return diagnostics


def test_the_options_are_echoed_as_applied(client: openai.OpenAI) -> None:
    response = client.responses.create(model="sim", input="Hello", prompt_cache_options={"mode": "implicit"})
    assert response.to_dict(warnings=False)["prompt_cache_options"] == {
        "mode": "implicit", "ttl": "30m", "comparison_response_id": None}  # fmt: skip
    assert "prompt_cache_diagnostics" not in response.to_dict(warnings=False)


def test_a_longer_prompt_with_the_same_settings_is_a_hit(client: openai.OpenAI) -> None:
    first = client.responses.create(model="sim", input=HISTORY, tools=[WEATHER_TOOL])  # type: ignore[list-item]
    longer = [*HISTORY, {"role": "user", "content": "Where is it?"}]
    assert compare(client, first.id, input=longer, tools=[WEATHER_TOOL]) == {"type": "cache_hit"}
    # The chain's next turn reads the first response's prompt, then its output, then the new input.
    assert compare(client, first.id, input="Where?", previous_response_id=first.id,
                   tools=[WEATHER_TOOL]) == {"type": "cache_hit"}  # fmt: skip


def test_each_setting_read_before_the_context_is_a_reason(client: openai.OpenAI) -> None:
    first = client.responses.create(model="sim", input=HISTORY, prompt_cache_key="thread-1")  # type: ignore[arg-type]
    same = {"input": HISTORY, "prompt_cache_key": "thread-1"}
    for change, reason in [
        ({"model": "sim-large"}, "model_changed"),
        ({"prompt_cache_key": "thread-2"}, "prompt_cache_key_changed"),
        ({"tools": [WEATHER_TOOL]}, "tools_changed"),
        (
            {"text": {"format": {"type": "json_object"}}, "input": [*HISTORY, {"role": "user", "content": "json"}]},
            "text_format_changed",
        ),
        ({"text": {"verbosity": "low"}}, "verbosity_changed"),
        ({"service_tier": "flex"}, "service_tier_changed"),
    ]:
        body = {**same, **change}
        model = body.pop("model", "sim")
        response = client.responses.create(model=model, prompt_cache_options={"comparison_response_id": first.id},
                                           **body)  # fmt: skip
        diagnostics = response.to_dict(warnings=False)["prompt_cache_diagnostics"]
        assert diagnostics["type"] == "cache_miss" and diagnostics["reason"] == reason, change
        assert diagnostics["cache_missed_tokens"] > 0
    thinking = client.responses.create(model="gpt-5-mini", input="Hi", reasoning={"effort": "low"})
    harder = client.responses.create(model="gpt-5-mini", input="Hi", reasoning={"effort": "high"},
                                     prompt_cache_options={"comparison_response_id": thinking.id})  # fmt: skip
    assert harder.to_dict(warnings=False)["prompt_cache_diagnostics"]["reason"] == "reasoning_effort_changed"


def test_a_changed_item_is_a_miss_counting_the_tokens_after_it(client: openai.OpenAI) -> None:
    first = client.responses.create(model="sim", input=[*HISTORY, {"role": "user", "content": "Who presents?"}])  # type: ignore[list-item]
    edited = [HISTORY[0], {"role": "assistant", "content": "Noted: Wednesday."}, {"role": "user", "content": "Who?"}]
    diagnostics = compare(client, first.id, input=edited)
    assert diagnostics["type"] == "cache_miss" and diagnostics["reason"] == "input_changed"
    assert 0 < diagnostics["comparison_reusable_tokens"] < diagnostics["cache_missed_tokens"] + 50


def test_an_unknown_comparison_is_reported_not_refused(client: openai.OpenAI) -> None:
    assert compare(client, "resp_nothing", input="Hello") == {"type": "comparison_response_not_found"}


def test_prewarm_reads_the_prompt_without_writing_output(client: openai.OpenAI) -> None:
    warmed = client.responses.create(model="sim", input=HISTORY, prompt_cache_options={"prewarm": True})  # type: ignore[arg-type]
    assert warmed.status == "completed" and warmed.output == []
    assert warmed.usage is not None and warmed.usage.input_tokens > 0


def test_the_embedded_model_reuses_a_prefix_unless_explicit_mode_has_no_breakpoint(client: openai.OpenAI) -> None:
    prompt = [{"role": "user", "content": "List three colours of the rainbow, one per line, and nothing else."}]
    body: dict[str, Any] = {"model": DEFAULT_MODEL_NAME, "input": prompt, "max_output_tokens": 8}
    warmed = client.responses.create(**body, prompt_cache_options={"prewarm": True})
    assert warmed.output == [] and warmed.usage is not None and warmed.usage.input_tokens > 0
    reused = client.responses.create(**body)
    assert reused.usage is not None and reused.usage.input_tokens_details.cached_tokens > 0
    afresh = client.responses.create(**body, prompt_cache_options={"mode": "explicit"})
    assert afresh.usage is not None and afresh.usage.input_tokens_details.cached_tokens == 0
    marked = [{"role": "user", "content": [{"type": "input_text", "text": prompt[0]["content"],
                                            "prompt_cache_breakpoint": {"mode": "explicit"}}]}]  # fmt: skip
    kept = client.responses.create(**{**body, "input": marked}, prompt_cache_options={"mode": "explicit"})
    assert kept.usage is not None and kept.usage.input_tokens_details.cached_tokens > 0


@pytest.fixture
def rig(tmp_path: Path) -> Iterator[Rig]:
    yield from start_rig(tmp_path, workers=2)


def test_a_key_goes_to_the_worker_that_holds_its_prefix(rig: Rig) -> None:
    def served_by(key: str) -> int:
        before = [len(upstream.requests) for upstream in rig.upstreams]
        rig.sdk.responses.create(model="up-model", input="Hello", prompt_cache_key=key)
        (worker,) = [index for index, upstream in enumerate(rig.upstreams) if len(upstream.requests) > before[index]]
        return worker

    homes = {key: served_by(key) for key in (f"thread-{n}" for n in range(20))}
    assert set(homes.values()) == {0, 1}  # keys spread over the workers
    assert all(served_by(key) == home for key, home in list(homes.items())[:6])  # and each keeps its own


def test_prewarm_on_an_upstream_sends_one_token_and_drops_it(rig: Rig) -> None:
    for upstream in rig.upstreams:
        upstream.script.append(Stream(text_chunks("dropped", usage={"prompt_tokens": 30, "completion_tokens": 1})))
    warmed = rig.sdk.responses.create(model="up-model", input=HISTORY, prompt_cache_options={"prewarm": True})  # type: ignore[arg-type]
    assert warmed.output == [] and warmed.usage is not None and warmed.usage.input_tokens == 30
    (sent,) = [request for upstream in rig.upstreams for request in upstream.requests]
    assert sent["max_tokens" if "max_tokens" in sent else "max_completion_tokens"] == 1
