"""The simulator as a product: seed-003 models, latency profiles, reasoning, error injection."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import openai
import pytest

from responsa.backends.simulator._text import count_tokens
from responsa.config import Settings
from tests.conftest import LiveServer, serve
from tests.http.test_streaming import parse_frames

SEED_MODELS = {"o1", "o3", "o4-mini", "gpt-5", "gpt-5-mini", "gpt-5-nano", "gpt-5.1", "gpt-5.2", "gpt-4.1",
               "gpt-4.1-mini", "gpt-4.1-nano", "sim"}  # fmt: skip


@pytest.fixture(scope="module")
def fast(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveServer]:
    """Latency off, as tests want it."""
    db = tmp_path_factory.mktemp("simmodels") / "s.db"
    with serve(Settings(db_url=f"sqlite:///{db}", sim_latency=False, embedded=False)) as live:
        yield live


@pytest.fixture
def sdk(fast: LiveServer) -> Iterator[openai.OpenAI]:
    with openai.OpenAI(base_url=fast.v1, api_key="x", max_retries=0) as client:
        yield client


def test_seed_models_are_listed(sdk: openai.OpenAI) -> None:
    assert SEED_MODELS <= {model.id for model in sdk.models.list()}


@pytest.mark.parametrize(("effort", "multiplier"), [("low", 1.5), ("medium", 3.0), ("high", 6.0)])
def test_reasoning_tokens_follow_the_effort(sdk: openai.OpenAI, effort: str, multiplier: float) -> None:
    reply = sdk.responses.create(model="o3", input="Reply with: four", reasoning={"effort": effort})
    reasoning, message = reply.output
    assert reasoning.type == "reasoning" and reasoning.summary == [] and message.type == "message"
    usage = reply.usage
    assert usage is not None
    visible = count_tokens(reply.output_text)
    assert usage.output_tokens_details.reasoning_tokens == round(multiplier * visible)
    assert usage.output_tokens == visible + usage.output_tokens_details.reasoning_tokens


@pytest.mark.parametrize(("mode", "share"), [("concise", 0.05), ("auto", 0.10), ("detailed", 0.15)])
def test_summary_length_scales_with_the_mode(sdk: openai.OpenAI, mode: str, share: float) -> None:
    reply = sdk.responses.create(
        model="gpt-5", input="Explain how glaciers carve valleys", reasoning={"effort": "high", "summary": mode}
    )
    reasoning = reply.output[0]
    assert reply.usage is not None
    tokens = reply.usage.output_tokens_details.reasoning_tokens
    [summary] = reasoning.summary
    assert summary.type == "summary_text" and summary.text
    assert abs(count_tokens(summary.text) - round(tokens * share)) <= 1


def test_effort_validity_per_model(sdk: openai.OpenAI, fast: LiveServer) -> None:
    for model, effort in (("o3", "minimal"), ("gpt-5.1", "xhigh"), ("o4-mini", "xhigh")):
        reply = httpx.post(f"{fast.v1}/responses", json={"model": model, "input": "x", "reasoning": {"effort": effort}})
        assert reply.status_code == 400 and reply.json()["error"]["param"] == "reasoning.effort", (model, effort)
    for model, effort in (("gpt-5", "minimal"), ("gpt-5.2", "xhigh"), ("o3", "none")):
        reply = sdk.responses.create(model=model, input="Reply with: ok", reasoning={"effort": effort})  # type: ignore[typeddict-item]
        assert reply.status == "completed"
    assert [item.type for item in sdk.responses.create(model="o3", input="x", reasoning={"effort": "none"}).output] == [
        "message"
    ]
    assert [item.type for item in sdk.responses.create(model="gpt-4.1", input="x").output] == ["message"]


def test_reasoning_streams_before_the_message(fast: LiveServer) -> None:
    body = {"model": "o4-mini", "input": "Why is the sky blue?", "reasoning": {"effort": "medium", "summary": "auto"},
            "stream": True}  # fmt: skip
    events = parse_frames(httpx.post(f"{fast.v1}/responses", json=body).content)
    reasoning = [e["type"] for e in events if e.get("output_index") == 0]
    assert reasoning[:2] == ["response.output_item.added", "response.reasoning_summary_part.added"]
    assert reasoning[-3:] == [
        "response.reasoning_summary_text.done", "response.reasoning_summary_part.done", "response.output_item.done"
    ]  # fmt: skip
    assert set(reasoning[2:-3]) == {"response.reasoning_summary_text.delta"}
    message = [e for e in events if e.get("output_index") == 1]
    assert message[0]["type"] == "response.output_item.added" and message[0]["item"]["type"] == "message"
    assert events.index(message[0]) > max(i for i, e in enumerate(events) if e.get("output_index") == 0)
    final = events[-1]["response"]
    assert final["output"][0]["summary"][0]["text"] == "".join(
        e["delta"] for e in events if e["type"] == "response.reasoning_summary_text.delta"
    )


def test_encrypted_reasoning_round_trips(sdk: openai.OpenAI) -> None:
    first = sdk.responses.create(
        model="gpt-5", input="Plan a picnic", reasoning={"effort": "low"}, include=["reasoning.encrypted_content"],
        store=False,
    )  # fmt: skip
    reasoning = first.output[0]
    assert reasoning.encrypted_content and reasoning.encrypted_content.startswith("rsa1.")  # sealed by the server
    again = sdk.responses.create(
        model="gpt-5", reasoning={"effort": "low"}, store=False,
        input=[{"role": "user", "content": "Plan a picnic"}, reasoning.model_dump(exclude_none=True),
               first.output[1].model_dump(exclude_none=True), {"role": "user", "content": "And for rain?"}],
    )  # fmt: skip
    assert again.status == "completed" and again.input_transformations is None  # opened: read, not withheld
    plain = sdk.responses.create(model="gpt-5", input="Plan a picnic", reasoning={"effort": "low"})
    assert plain.output[0].encrypted_content is None


def test_reasoning_counts_against_max_output_tokens(sdk: openai.OpenAI) -> None:
    reply = sdk.responses.create(model="o1", input="Explain tides", reasoning={"effort": "high"}, max_output_tokens=16)
    assert reply.status == "incomplete" and [item.type for item in reply.output] == ["reasoning"]
    assert reply.usage is not None and reply.usage.output_tokens == 16


def test_latency_profiles_apply_unless_turned_off(tmp_path: Path) -> None:
    profiles = tmp_path / "profiles.toml"
    profiles.write_text("[models.slowpoke]\nttft_ms = 400\ntokens_per_second = 100\n")
    settings = Settings(db_url=f"sqlite:///{tmp_path / 'p.db'}", sim_profiles=profiles, embedded=False)
    with serve(settings) as live:
        started = time.monotonic()
        reply = httpx.post(
            f"{live.v1}/responses", json={"model": "slowpoke", "input": "Reply with: a b c d e f g h i j"}
        )
        elapsed = time.monotonic() - started
        assert reply.status_code == 200 and reply.json()["output_text"] == "a b c d e f g h i j"
        # At least the time to first token plus ten tokens at 100/s, less the profile's 0 jitter.
        assert elapsed >= 0.4 + 0.09
        assert "o3" in [m["id"] for m in httpx.get(f"{live.v1}/models").json()["data"]]


def test_random_faults_and_the_timeout_fault(tmp_path: Path) -> None:
    settings = Settings(db_url=f"sqlite:///{tmp_path / 'f.db'}", sim_fault_rate=1.0, sim_faults=("rate_limit",),
                        sim_timeout_secs=0.2, embedded=False)  # fmt: skip
    with serve(settings) as live:
        for _ in range(3):
            reply = httpx.post(f"{live.v1}/responses", json={"model": "gpt-4.1", "input": "x"})
            assert reply.status_code == 429 and reply.json()["error"]["code"] == "rate_limit_exceeded"
        timed_out = httpx.post(f"{live.v1}/responses", json={"model": "sim", "input": "x"},
                               headers={"x-responsa-fault": "timeout"})  # fmt: skip
        assert timed_out.status_code == 500 and timed_out.json()["error"]["code"] == "timeout"


@pytest.mark.parametrize(
    ("tool", "prompt", "item_type", "middle", "prefix"),
    [
        ("web_search", "Search the latest news about comets", "web_search_call", "searching", "ws_"),
        ("web_search_2025_08_26", "Search the latest news about comets", "web_search_call", "searching", "ws_"),
        ("file_search", "Find it in my report file", "file_search_call", "searching", "fs_"),
        ("code_interpreter", "Calculate the sum of 2, 3 and 4", "code_interpreter_call", "interpreting", "ci_"),
        ("image_generation", "Draw a picture of a lighthouse", "image_generation_call", "generating", "ig_"),
    ],
)
def test_built_in_tools_give_plausible_items(
    sdk: openai.OpenAI, fast: LiveServer, tool: str, prompt: str, item_type: str, middle: str, prefix: str
) -> None:
    reply = sdk.responses.create(model="gpt-4.1", input=prompt, tools=[{"type": tool}],  # type: ignore[list-item]
                                 include=["code_interpreter_call.outputs"])  # fmt: skip
    assert [item.type for item in reply.output] == [item_type, "message"]
    call = reply.output[0]
    assert call.status == "completed" and call.id.startswith(prefix)  # the prefix real runs use
    if item_type == "web_search_call":
        assert "comets" in call.action.query and "comets" in reply.output_text  # type: ignore[union-attr]
    if item_type == "code_interpreter_call":
        assert call.outputs[0].logs == "9" and "9" in reply.output_text  # type: ignore[union-attr]
    if item_type == "image_generation_call":
        import base64

        assert base64.b64decode(call.result).startswith(b"\x89PNG")  # type: ignore[union-attr]
    events = parse_frames(httpx.post(f"{fast.v1}/responses", json={"model": "gpt-4.1", "input": prompt,
                                                                     "tools": [{"type": tool}], "stream": True}).content)  # fmt: skip
    kinds = [e["type"] for e in events if e.get("output_index") == 0]
    assert kinds == ["response.output_item.added", f"response.{item_type}.in_progress", f"response.{item_type}.{middle}",
                     f"response.{item_type}.completed", "response.output_item.done"]  # fmt: skip
    assert sdk.responses.retrieve(reply.id).model_dump() == reply.model_dump()


def test_built_in_tool_choice_forces_and_other_backends_refuse(sdk: openai.OpenAI, fast: LiveServer) -> None:
    forced = sdk.responses.create(model="sim", input="Hello there", tools=[{"type": "web_search"}],
                                  tool_choice={"type": "web_search"})  # type: ignore[list-item,arg-type]  # fmt: skip
    assert forced.output[0].type == "web_search_call"
    quiet = sdk.responses.create(model="sim", input="Hello there", tools=[{"type": "web_search"}])  # type: ignore[list-item]
    assert [item.type for item in quiet.output] == ["message"]
    refused = httpx.post(
        f"{fast.v1}/responses", json={"model": "sim", "input": "x", "tools": [{"type": "computer_use"}]}
    )
    assert refused.status_code == 400 and refused.json()["error"]["param"] == "tools[0].type"


def test_the_simulator_runs_code_only_in_a_container_there_is(sdk: openai.OpenAI) -> None:
    """A code_interpreter tool naming a container id: the simulator simulates the run only in one that
    exists, as the real path does (it used to answer for any id)."""
    tool = {"type": "code_interpreter", "container": "cntr_does_not_exist"}
    with pytest.raises(openai.NotFoundError) as caught:
        sdk.responses.create(model="gpt-4.1", input="Calculate the sum of 2, 3 and 4", tools=[tool])  # type: ignore[list-item]
    assert caught.value.param == "tools.container"
    container = sdk.containers.create(name="sums")
    reply = sdk.responses.create(model="gpt-4.1", input="Calculate the sum of 2, 3 and 4",
                                 tools=[{**tool, "container": container.id}])  # type: ignore[list-item]  # fmt: skip
    assert reply.status == "completed" and reply.output[0].type == "code_interpreter_call"
