"""The upstream path against a real OpenAI-compatible server: ``llama_cpp.server`` with SmolLM2, on loopback."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator

import httpx
import openai
import pytest

from responsa.backends.llama_cpp import default_gguf
from responsa.config import Settings
from tests.conftest import LiveServer, free_port, serve, wait_until_answering
from tests.http.test_streaming import parse_frames

ALIAS = "smol-upstream"


@pytest.fixture(scope="module")
def upstream_url() -> Iterator[str]:
    port = free_port()
    command = [sys.executable, "-m", "llama_cpp.server", "--model", str(default_gguf()), "--model_alias", ALIAS,
               "--host", "127.0.0.1", "--port", str(port), "--n_ctx", "2048", "--n_threads", "1"]  # fmt: skip
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    url = f"http://127.0.0.1:{port}/v1"
    try:
        wait_until_answering(f"{url}/models", process)
        yield url
    finally:
        process.terminate()
        process.wait(15)


@pytest.fixture(scope="module")
def gateway(upstream_url: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveServer]:
    db = tmp_path_factory.mktemp("gw") / "gw.db"
    settings = Settings(db_url=f"sqlite:///{db}", upstreams=(upstream_url,), embedded=False, simulator=False)
    with serve(settings) as live:
        yield live


def test_discovered_model_answers(gateway: LiveServer) -> None:
    with openai.OpenAI(base_url=gateway.v1, api_key="x", max_retries=0) as sdk:
        assert [model.id for model in sdk.models.list()] == [ALIAS]
        reply = sdk.responses.create(model=ALIAS, input="Name a color.", max_output_tokens=8, temperature=0)
        assert reply.output_text.strip()
        assert reply.usage is not None and reply.usage.input_tokens > 5 and 0 < reply.usage.output_tokens <= 8
        follow = sdk.responses.create(model=ALIAS, input="And another?", previous_response_id=reply.id,
                                      max_output_tokens=8)  # fmt: skip
        assert follow.usage is not None and follow.usage.input_tokens > reply.usage.input_tokens


def test_streaming_through_the_upstream(gateway: LiveServer) -> None:
    body = {"model": ALIAS, "input": "Say hello.", "max_output_tokens": 8, "stream": True, "temperature": 0}
    events = parse_frames(httpx.post(f"{gateway.v1}/responses", json=body, timeout=60).content)
    deltas = [e["delta"] for e in events if e["type"] == "response.output_text.delta"]
    assert len(deltas) >= 2, events[-1]  # the ending says why, should the upstream send no text
    assert events[-1]["type"] in ("response.completed", "response.incomplete")
    assert "".join(deltas) == events[-1]["response"]["output"][0]["content"][0]["text"]


def test_json_object_reaches_the_upstream(gateway: LiveServer) -> None:
    # llama-cpp-python's server knows json_object (not json_schema) in response_format.
    with openai.OpenAI(base_url=gateway.v1, api_key="x", max_retries=0) as sdk:
        reply = sdk.responses.create(
            model=ALIAS,
            input="Reply in JSON with a color.",
            max_output_tokens=40,
            text={"format": {"type": "json_object"}},
        )
    if reply.status == "completed":
        assert isinstance(json.loads(reply.output_text), dict)
    else:
        assert reply.output_text.lstrip().startswith("{")
