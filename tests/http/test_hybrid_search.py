"""Hybrid search: with ``--embedding-model`` naming an upstream model that serves ``/v1/embeddings``
(a real HTTP peer on loopback with a toy embedding that knows synonyms), vector stores embed their
chunks and rank by keywords and vectors together, so a query sharing no word with a passage finds
it; without one, the same query finds nothing. SQLite and PostgreSQL."""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Iterator
from contextlib import ExitStack

import openai
import pytest

from responsa.backends.llama_cpp import DEFAULT_MODEL_NAME
from responsa.config import Settings, UpstreamConfig
from tests.backends.mock_upstream import MockUpstream
from tests.conftest import fresh_postgres_database, serve, serve_app

PASSAGES = {
    "garage.txt": b"The car needs new tyres and an oil change before the trip.",
    "clinic.txt": b"The doctor sees patients every morning at the clinic.",
}


@pytest.fixture(params=["sqlite", "postgresql"])
def hybrid(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[tuple[openai.OpenAI, MockUpstream]]:
    with ExitStack() as stack:
        if request.param == "sqlite":
            db = f"sqlite:///{tmp_path_factory.mktemp('hybrid') / 'r.db'}"
        else:
            db = stack.enter_context(fresh_postgres_database())
        upstream = MockUpstream(models=("embedder",))
        url = f"{stack.enter_context(serve_app(upstream.app)).url}/v1"
        settings = Settings(
            db_url=db,
            embedded=False,
            models=(UpstreamConfig(name="embedder", urls=(url,)),),
            embedding_model="embedder",
        )
        server = stack.enter_context(serve(settings))
        yield stack.enter_context(openai.OpenAI(base_url=server.v1, api_key="unused", max_retries=0)), upstream


def _ingested(client: openai.OpenAI, names: dict[str, bytes]) -> str:
    ids = [client.files.create(file=(name, data), purpose="assistants").id for name, data in names.items()]
    store = client.vector_stores.create(name="hybrid", file_ids=ids)
    deadline = time.monotonic() + 30
    while client.vector_stores.retrieve(store.id).file_counts.in_progress:
        assert time.monotonic() < deadline
        time.sleep(0.05)
    return store.id


def test_vectors_find_what_keywords_miss(hybrid: tuple[openai.OpenAI, MockUpstream]) -> None:
    client, upstream = hybrid
    store = _ingested(client, PASSAGES)
    assert client.vector_stores.retrieve(store).file_counts.completed == 2
    embedded_texts = [text for body in upstream.embedding_requests for text in body["input"]]
    assert any("tyres" in text for text in embedded_texts) and upstream.embedding_requests[0]["model"] == "embedder"

    # No word in common with the garage passage: only its vector is near ("automobile" ~ "car").
    found = client.vector_stores.search(store, query="automobile").data
    assert found and found[0].filename == "garage.txt" and 0 < found[0].score <= 1
    physician = client.vector_stores.search(store, query="physician").data
    assert physician[0].filename == "clinic.txt"
    # A passage that is first by keywords and by vector scores 1.
    both = client.vector_stores.search(store, query="doctor patients").data
    assert both[0].filename == "clinic.txt" and both[0].score == pytest.approx(1.0)


def test_a_failing_embedding_model_fails_the_file(hybrid: tuple[openai.OpenAI, MockUpstream]) -> None:
    client, upstream = hybrid
    upstream.embeddings_fail = True
    store = _ingested(client, {"x.txt": b"some text"})
    [failed] = client.vector_stores.files.list(store)
    assert failed.status == "failed" and failed.last_error and failed.last_error.code == "server_error"


def test_keywords_alone_miss_it(client: openai.OpenAI) -> None:
    store = _ingested(client, PASSAGES)  # the shared server has no embedding model
    assert client.vector_stores.search(store, query="automobile").data == []
    assert client.vector_stores.search(store, query="car").data[0].filename == "garage.txt"


def test_the_embedded_model_embeds_for_hybrid_search(tmp_path_factory: pytest.TempPathFactory) -> None:
    """``--embedding-model smollm2-135m-instruct``: the packaged model, in embedding mode, ranks by meaning too."""
    db = tmp_path_factory.mktemp("embedded-hybrid") / "r.db"
    settings = Settings(db_url=f"sqlite:///{db}", simulator=False, embedding_model=DEFAULT_MODEL_NAME)
    with serve(settings) as server, openai.OpenAI(base_url=server.v1, api_key="unused", max_retries=0) as client:
        store = _ingested(client, PASSAGES)
        assert client.vector_stores.retrieve(store).file_counts.completed == 2
        with sqlite3.connect(db) as conn:
            assert conn.execute("SELECT count(*) FROM chunk_vectors").fetchone() == (2,)
            [(width,)] = conn.execute("SELECT length(vector) FROM chunk_vectors LIMIT 1").fetchall()
        assert width == 576 * 4  # SmolLM2's hidden size, float32
        found = client.vector_stores.search(store, query="automobile").data  # no shared word: vectors alone
        assert found and found[0].filename == "garage.txt"  # deterministic: embeddings are not sampled
