"""``truncation: "auto"`` drops the oldest items (whole tool exchanges) until the input fits the
model's context window; ``disabled`` answers 400 ``context_length_exceeded``. On an upstream with a
known window (which shows exactly what reached it), the simulator and the embedded model."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import ExitStack
from pathlib import Path
from typing import Any

import httpx
import openai
import pytest

from responsa.backends.llama_cpp import DEFAULT_MODEL_NAME
from responsa.config import Settings, UpstreamConfig
from tests.backends.mock_upstream import MockUpstream
from tests.conftest import LiveServer, serve, serve_app, sqlite_server


def history(turns: int, words: int = 40) -> list[dict[str, Any]]:
    """``turns`` user/assistant exchanges, the middle one a tool call with its output."""
    items: list[dict[str, Any]] = []
    for turn in range(turns):
        filler = " ".join(f"w{turn}x{n}" for n in range(words))
        if turn == turns // 2:
            items += [
                {"type": "function_call", "call_id": f"call_{turn}", "name": "lookup", "arguments": "{}"},
                {"type": "function_call_output", "call_id": f"call_{turn}", "output": filler},
            ]
            continue
        items += [{"role": "user", "content": f"turn {turn}: {filler}"},
                  {"role": "assistant", "content": f"reply {turn}: {filler}"}]  # fmt: skip
    return [*items, {"role": "user", "content": "And the final question?"}]


@pytest.fixture(scope="module")
def upstream(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[MockUpstream, LiveServer]]:
    mock = MockUpstream()
    with ExitStack() as stack:
        url = f"{stack.enter_context(serve_app(mock.app)).url}/v1"
        model = UpstreamConfig(name="up-model", urls=(url,), context_window=600)
        db = tmp_path_factory.mktemp("truncation-upstream") / "t.db"
        settings = Settings(db_url=f"sqlite:///{db}", models=(model,), embedded=False, simulator=False)
        yield mock, stack.enter_context(serve(settings))


def test_auto_drops_the_oldest_whole_items_until_the_input_fits(upstream: tuple[MockUpstream, LiveServer]) -> None:
    mock, server = upstream
    body = {"model": "up-model", "input": history(8), "truncation": "auto", "max_output_tokens": 50}
    reply = httpx.post(f"{server.v1}/responses", json=body, timeout=30)
    assert reply.status_code == 200, reply.text
    messages = mock.requests[-1]["messages"]
    assert messages[-1]["content"] == "And the final question?"
    assert not any("turn 0:" in str(m.get("content")) for m in messages)  # the oldest went first
    assert len(messages) < len(body["input"])  # type: ignore[arg-type]
    # Never half a tool exchange: a tool result reaches the model only after its call.
    calls = {c["id"] for m in messages for c in m.get("tool_calls") or []}
    assert all(m["tool_call_id"] in calls for m in messages if m["role"] == "tool")
    assert reply.json()["truncation"] == "auto"
    counted = httpx.post(f"{server.v1}/responses/input_tokens", json=body, timeout=30).json()["input_tokens"]
    assert counted <= 600 - 50


def test_disabled_sends_the_whole_input(upstream: tuple[MockUpstream, LiveServer]) -> None:
    mock, server = upstream
    reply = httpx.post(f"{server.v1}/responses", json={"model": "up-model", "input": history(8)}, timeout=30)
    # Without truncation nothing is dropped: the upstream decides (this mock takes anything; a real one says 400).
    assert reply.status_code == 200
    sent = str(mock.requests[-1]["messages"])
    assert all(f"turn {turn}:" in sent for turn in range(8) if turn != 4) and "call_4" in sent


def test_simulator_window_auto_and_disabled(tmp_path: Path) -> None:
    profiles = tmp_path / "profiles.toml"
    profiles.write_text("[models.sim-small]\ncontext_window = 500\n")
    with serve(Settings(db_url=f"sqlite:///{tmp_path / 's.db'}", sim_profiles=profiles, embedded=False)) as live:
        with openai.OpenAI(base_url=live.v1, api_key="x", max_retries=0) as client:
            with pytest.raises(openai.BadRequestError) as refused:
                client.responses.create(model="sim-small", input=history(10))  # type: ignore[arg-type]
            assert refused.value.code == "context_length_exceeded"
            fitted = client.responses.create(model="sim-small", input=history(10), truncation="auto",  # type: ignore[arg-type]
                                             max_output_tokens=60)  # fmt: skip
            assert fitted.status in ("completed", "incomplete")
            assert fitted.usage is not None and fitted.usage.input_tokens <= 500 - 60


EMBEDDED_WINDOW = 1024
"""The embedded model's window on this module's server: the fitted input is read whole (on two cores
the 135M model reads ~200 tokens a second), so a small window keeps the test short."""


def test_embedded_model_auto_fits_its_context_window(client: openai.OpenAI) -> None:
    long = history(6, words=100)  # about 5,000 tokens: more than the embedded model's window
    with pytest.raises(openai.BadRequestError) as refused:
        client.responses.create(model=DEFAULT_MODEL_NAME, input=long, max_output_tokens=8)  # type: ignore[arg-type]
    assert refused.value.code == "context_length_exceeded"
    fitted = client.responses.create(model=DEFAULT_MODEL_NAME, input=long, truncation="auto", max_output_tokens=8)  # type: ignore[arg-type]
    assert fitted.usage is not None and EMBEDDED_WINDOW // 2 < fitted.usage.input_tokens <= EMBEDDED_WINDOW - 8


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveServer]:
    yield from sqlite_server(tmp_path_factory, "truncation", embedded_context=EMBEDDED_WINDOW)
