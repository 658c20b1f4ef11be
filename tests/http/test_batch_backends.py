"""Batches on every backend: a Chat Completions upstream (a real HTTP peer on loopback) runs
``/v1/responses`` and ``/v1/embeddings`` lines, the embedded model runs responses lines in its slots;
and ``POST /v1/embeddings`` itself through ``client.embeddings``. Interactive requests go first: with
one slot, a request sent while a batch runs is answered before the batch's remaining lines, and a
request that finds the slot held by a line stops that line (which runs again) instead of waiting."""

from __future__ import annotations

import base64
import struct
import time
from collections.abc import Iterator
from contextlib import ExitStack

import httpx
import openai
import pytest

from responsa.backends.llama_cpp import DEFAULT_MODEL_NAME
from responsa.config import Settings, UpstreamConfig
from tests.backends.mock_upstream import MockUpstream, meaning
from tests.conftest import LiveServer, serve, serve_app
from tests.http.test_batches import finished, jsonl, line, upload
from tests.prometheus_text import metric


@pytest.fixture(scope="module")
def upstream_client(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[openai.OpenAI, MockUpstream]]:
    with ExitStack() as stack:
        upstream = MockUpstream(models=("up-model", "embedder"))
        url = f"{stack.enter_context(serve_app(upstream.app)).url}/v1"
        settings = Settings(
            db_url=f"sqlite:///{tmp_path_factory.mktemp('batch-upstream') / 'r.db'}",
            embedded=False,
            models=(UpstreamConfig(name="up-model", urls=(url,)), UpstreamConfig(name="embedder", urls=(url,))),
        )
        server = stack.enter_context(serve(settings))
        yield stack.enter_context(openai.OpenAI(base_url=server.v1, api_key="unused", max_retries=0)), upstream


def test_embeddings_as_openai_answers_them(upstream_client: tuple[openai.OpenAI, MockUpstream]) -> None:
    client, _ = upstream_client
    made = client.embeddings.create(model="embedder", input=["new tyres", "oil change"])
    assert [entry.index for entry in made.data] == [0, 1] and made.model == "embedder"
    assert made.data[0].embedding == pytest.approx(meaning("new tyres"), abs=1e-6)
    assert made.usage.prompt_tokens > 0 and made.usage.total_tokens == made.usage.prompt_tokens
    packed = client.embeddings.with_raw_response.create(
        model="embedder", input="new tyres", encoding_format="base64"
    ).http_response.json()
    raw = base64.b64decode(packed["data"][0]["embedding"])
    assert list(struct.unpack(f"<{len(raw) // 4}f", raw)) == pytest.approx(meaning("new tyres"), abs=1e-6)
    with pytest.raises(openai.BadRequestError) as sized:
        client.embeddings.create(model="embedder", input="x", dimensions=8)
    assert sized.value.body["param"] == "dimensions"  # type: ignore[index]
    with pytest.raises(openai.BadRequestError) as empty:
        client.embeddings.create(model="embedder", input=[])
    assert empty.value.body["param"] == "input"  # type: ignore[index]


def test_responses_and_embeddings_batches_on_an_upstream(upstream_client: tuple[openai.OpenAI, MockUpstream]) -> None:
    client, upstream = upstream_client
    asked = len(upstream.requests)
    lines = [line(f"u{index}", {"model": "up-model", "input": f"hi {index}"}) for index in range(4)]
    batch = finished(
        client,
        client.batches.create(
            input_file_id=upload(client, lines), endpoint="/v1/responses", completion_window="24h"
        ).id,
    )
    assert batch.status == "completed" and batch.output_file_id
    texts = [
        entry["response"]["body"]["output"][0]["content"][0]["text"] for entry in jsonl(client, batch.output_file_id)
    ]
    assert texts == ["hello from upstream"] * 4 and len(upstream.requests) - asked == 4
    lines = [
        line(f"e{index}", {"model": "embedder", "input": word}, "/v1/embeddings")
        for index, word in enumerate(["car", "doctor"])
    ]
    batch = finished(
        client,
        client.batches.create(
            input_file_id=upload(client, lines), endpoint="/v1/embeddings", completion_window="24h"
        ).id,
    )
    assert batch.status == "completed" and batch.output_file_id
    for entry, word in zip(jsonl(client, batch.output_file_id), ["car", "doctor"], strict=True):
        assert entry["response"]["body"]["data"][0]["embedding"] == pytest.approx(meaning(word), abs=1e-6)


def test_a_batch_on_the_embedded_model(tmp_path_factory: pytest.TempPathFactory) -> None:
    db = tmp_path_factory.mktemp("batch-embedded") / "r.db"
    with serve(Settings(db_url=f"sqlite:///{db}", simulator=False)) as live:
        client = openai.OpenAI(base_url=live.v1, api_key="unused", max_retries=0)
        lines = [line(f"m{index}", {"model": DEFAULT_MODEL_NAME, "input": f"Count to {index + 2}.",
                                    "max_output_tokens": 12}) for index in range(4)]  # fmt: skip
        batch = finished(
            client,
            client.batches.create(
                input_file_id=upload(client, lines), endpoint="/v1/responses", completion_window="24h"
            ).id,
            300,
        )
        assert batch.status == "completed" and batch.model == DEFAULT_MODEL_NAME and batch.output_file_id
        outputs = jsonl(client, batch.output_file_id)
        assert [entry["custom_id"] for entry in outputs] == [f"m{index}" for index in range(4)]
        assert all(entry["response"]["body"]["usage"]["output_tokens"] > 0 for entry in outputs)


def test_an_interactive_request_goes_before_the_batchs_next_lines(tmp_path_factory: pytest.TempPathFactory) -> None:
    """One generation at a time: the batch holds the slot line after line; a request sent meanwhile
    takes the slot when the running line ends, before every remaining line."""
    db = tmp_path_factory.mktemp("batch-priority") / "r.db"
    with serve(Settings(db_url=f"sqlite:///{db}", max_generations=1, sim_token_delay_ms=5)) as live:
        client = openai.OpenAI(base_url=live.v1, api_key="unused", max_retries=0)
        lines = [line(f"p{index}", {"model": "sim", "input": "Tell me a story.", "max_output_tokens": 40})
                 for index in range(20)]  # fmt: skip
        batch = client.batches.create(
            input_file_id=upload(client, lines), endpoint="/v1/responses", completion_window="24h"
        )
        while (seen := client.batches.retrieve(batch.id)).request_counts is None or seen.request_counts.completed < 1:
            time.sleep(0.01)  # until the batch holds the slot
        client.responses.create(model="sim", input="Me first.", max_output_tokens=10)
        during = client.batches.retrieve(batch.id)
        assert during.request_counts is not None and during.request_counts.completed <= 4, during.request_counts
        assert finished(client, batch.id).status == "completed"


def _generations(live: LiveServer, admitted: str) -> int:
    """The slots held now by work admitted so (``line`` or ``apart``), from ``/metrics``."""
    return int(metric(httpx.get(f"{live.url}/metrics").text, "responsa_generations", admitted=admitted))


def test_a_request_finding_the_slot_held_by_a_line_stops_it(tmp_path_factory: pytest.TempPathFactory) -> None:
    """One slot, held by a line that generates for seconds: a request sent meanwhile does not wait for
    its end; the line is stopped, stores nothing, and runs again afterwards: each line's result once."""
    db = tmp_path_factory.mktemp("batch-preempt") / "r.db"
    with serve(Settings(db_url=f"sqlite:///{db}", max_generations=1, sim_token_delay_ms=5)) as live:
        client = openai.OpenAI(base_url=live.v1, api_key="unused", max_retries=0)
        body = {"model": "sim", "input": "Tell me a story.", "max_output_tokens": 400, "ignore_eos": True}
        lines = [line(f"long{index}", body) for index in range(2)]  # 400 tokens 5 ms apart: 2 s a line
        batch = client.batches.create(
            input_file_id=upload(client, lines), endpoint="/v1/responses", completion_window="24h"
        )
        deadline = time.monotonic() + 30
        while _generations(live, "apart") < 1:  # until a line holds the slot
            assert time.monotonic() < deadline, "no line took the slot"
            time.sleep(0.01)
        first = client.responses.create(model="sim", input="Me first.")
        during = client.batches.retrieve(batch.id)
        assert first.status == "completed"
        assert during.request_counts is not None and during.request_counts.completed == 0, during.request_counts
        done = finished(client, batch.id)
        assert done.status == "completed" and done.output_file_id and done.error_file_id is None
        outputs = jsonl(client, done.output_file_id)
        assert sorted(entry["custom_id"] for entry in outputs) == ["long0", "long1"]
        assert all(entry["response"]["body"]["usage"]["output_tokens"] == 400 for entry in outputs)
        stored = httpx.get(f"{live.v1}/responses", params={"limit": 100}).json()["data"]
        made = {entry["response"]["body"]["id"] for entry in outputs} | {first.id}
        assert {response["id"] for response in stored} == made  # the stopped run left nothing behind
