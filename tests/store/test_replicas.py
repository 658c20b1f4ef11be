"""Several responsa processes on one store behave as one service: two replicas on one PostgreSQL
database (sharing a ``--secret-key``, as a fleet must), and the two workers of one ``responsa serve
--workers 2`` on one SQLite file and on PostgreSQL (no key given: the server makes one for all its
workers). Each client is pinned to a process, so every step below crosses from one to the other."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from pathlib import Path

import httpx
import openai
import pytest

from tests.conftest import free_port, wait_until_answering
from tests.pinned import Place, distinct_workers

LONG = "Write at length about the history of navigation and the stars"
Pair = Callable[[], AbstractContextManager[list[Place]]]


def _serving(command: list[str]) -> tuple[subprocess.Popen[bytes], str]:
    port = free_port()
    process = subprocess.Popen([sys.executable, "-m", "responsa.cli", "serve", "--port", str(port), "--no-embedded",
                                "--no-code-interpreter", "--sim-token-delay-ms", "15", "--batch-concurrency", "3", *command],
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)  # fmt: skip
    wait_until_answering(f"http://127.0.0.1:{port}/health", process)
    return process, f"http://127.0.0.1:{port}"


@contextmanager
def _replicas(urls: list[str]) -> Iterator[list[Place]]:
    places = [Place(httpx.Client(base_url=f"{url}/v1", timeout=60)) for url in urls]
    try:
        yield places
    finally:
        for place in places:
            place.http.close()


@pytest.fixture(scope="module", params=["replicas", "workers", "postgres workers"])
def places(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Pair]:
    """Two processes of one service: ``with places() as (one, two)``."""
    processes = []
    try:
        if request.param == "replicas":
            postgres_url = request.getfixturevalue("postgres_url")
            for _ in range(2):
                processes.append(_serving(["--db", postgres_url, "--secret-key", "the fleet's own"]))
            yield lambda: _replicas([url for _, url in processes])
        elif request.param == "postgres workers":
            processes.append(_serving(["--db", request.getfixturevalue("postgres_url"), "--workers", "2"]))
            yield lambda: distinct_workers(processes[0][1])
        else:
            db = Path(tmp_path_factory.mktemp("workers")) / "responsa.db"
            processes.append(_serving(["--db", f"sqlite:///{db}", "--workers", "2"]))
            yield lambda: distinct_workers(processes[0][1])
    finally:
        for process, _ in processes:
            process.terminate()
            process.wait(15)


def test_create_here_retrieve_chain_and_list_there(places: Pair) -> None:
    with places() as (one, two):
        a, b = one.openai(), two.openai()
        first = a.responses.create(model="sim", input="Reply with: made on one")
        assert b.responses.retrieve(first.id).model_dump() == first.model_dump()
        second = b.responses.create(model="sim", input="Reply with: chained on two", previous_response_id=first.id)
        assert second.usage is not None and first.usage is not None
        assert second.usage.input_tokens > first.usage.input_tokens + first.usage.output_tokens
        assert [i.content[0].text for i in a.responses.input_items.list(second.id)] == ["Reply with: chained on two"]  # type: ignore[union-attr]
        conversation = a.conversations.create()
        b.responses.create(model="sim", input="Reply with: in the conversation", conversation=conversation.id)
        assert [i.content[0].text for i in a.conversations.items.list(conversation.id, order="asc")] == [  # type: ignore[union-attr]
            "Reply with: in the conversation", "in the conversation"]  # fmt: skip
        b.responses.delete(first.id)
        with pytest.raises(openai.NotFoundError):
            a.responses.retrieve(first.id)


def test_an_item_removed_there_leaves_the_next_turn_here(places: Pair) -> None:
    """A process keeps a parsed snapshot of a conversation between its turns: an item another process
    removed in the meantime must be gone from this one's next turn (the same input tokens as the same
    turn in a new conversation holding the items that remain)."""
    with places() as (one, two):
        a, b = one.openai(), two.openai()
        words = ["alpha", "beta gamma", "delta epsilon zeta", "eta theta iota kappa"]
        conversation = a.conversations.create(items=[{"role": "user", "content": text} for text in words])
        a.responses.create(model="sim", input="a first turn", conversation=conversation.id, max_output_tokens=8)
        items = list(b.conversations.items.list(conversation.id, order="asc", limit=100).data)
        b.conversations.items.delete(items[2].id, conversation_id=conversation.id)  # type: ignore[arg-type]
        left = [{"role": i.role, "content": i.content[0].text} for i in items[:2] + items[3:]]  # type: ignore[union-attr]
        fresh = b.responses.create(model="sim", input="next", conversation=b.conversations.create(items=left).id)  # type: ignore[arg-type]
        kept = a.responses.create(model="sim", input="next", conversation=conversation.id)
        assert kept.usage is not None and fresh.usage is not None
        assert kept.usage.input_tokens == fresh.usage.input_tokens


def test_a_response_deleted_there_leaves_a_chain_read_here(places: Pair) -> None:
    """A process caches the contexts of chains it read: a response another process deleted must not
    feed the next turn here (the same input tokens as the same turn made on the other process)."""
    with places() as (one, two):
        a, b = one.openai(), two.openai()
        first = a.responses.create(model="sim", input="Remember the word albatross and the number seven.")
        second = a.responses.create(model="sim", input="And a colour: teal.", previous_response_id=first.id)
        cached = a.responses.create(model="sim", input="next", previous_response_id=second.id)  # caches the chain
        b.responses.delete(first.id)
        there = b.responses.create(model="sim", input="next", previous_response_id=second.id)
        here = a.responses.create(model="sim", input="next", previous_response_id=second.id)
        assert here.usage is not None and there.usage is not None and cached.usage is not None
        assert here.usage.input_tokens == there.usage.input_tokens < cached.usage.input_tokens


def test_a_compaction_made_here_opens_there(places: Pair) -> None:
    history = [{"role": "user", "content": "Remember: the code word is heliotrope."},
               {"role": "assistant", "content": "Noted: heliotrope."}]  # fmt: skip
    with places() as (one, two):
        compacted = one.openai().responses.compact(model="sim", input=history)
        items = [item.to_dict(warnings=False) for item in compacted.output]
        assert [item["type"] for item in items] == ["message", "compaction"]
        follow = two.openai().responses.create(model="sim", input=[*items, {"role": "user", "content": "The word?"}])
        assert follow.status == "completed"


def test_background_on_one_resumed_and_cancelled_on_the_other(places: Pair) -> None:
    with places() as (one, two):
        started = one.http.post("/responses", json={"model": "sim", "input": LONG, "background": True,
                                                    "max_output_tokens": 3000}).json()  # fmt: skip
        seen: list[dict[str, object]] = []
        with two.another() as watcher, watcher.http.stream("GET", f"/responses/{started['id']}",
                                                          params={"stream": "true", "starting_after": "1"}) as reply:  # fmt: skip
            for line in reply.iter_lines():
                if line.startswith("data: {"):
                    seen.append(json.loads(line[6:]))
                    if len(seen) == 10:
                        break
        assert [e["sequence_number"] for e in seen] == list(range(2, 12))
        cancelled = two.http.post(f"/responses/{started['id']}/cancel", timeout=30).json()
        assert cancelled["status"] == "cancelled"
        time.sleep(0.3)
        on_one = one.http.get(f"/responses/{started['id']}").json()
        assert on_one["status"] == "cancelled" and on_one["output"][0]["status"] == "incomplete"


def test_files_and_vector_stores_made_here_are_searched_there(places: Pair) -> None:
    with places() as (one, two):
        a, b = one.openai(), two.openai()
        notes = a.files.create(file=("tides.txt", b"The moon's gravity pulls the oceans and makes the tides."),
                               purpose="assistants")  # fmt: skip
        store = b.vector_stores.create(name="notes", file_ids=[notes.id])
        while (store := a.vector_stores.retrieve(store.id)).status == "in_progress":
            time.sleep(0.05)
        assert store.file_counts.completed == 1
        assert "moon" in a.vector_stores.search(store.id, query="tides moon").data[0].content[0].text
        assert b.files.content(notes.id).read().startswith(b"The moon's gravity")
        a.files.delete(notes.id)
        assert b.vector_stores.search(store.id, query="tides moon").data == []


def _output_tokens(place: Place) -> float:
    """What ``/metrics`` counts of output tokens (one process's own, for a replica; all workers' summed)."""
    text = httpx.get(str(place.http.base_url.join("/metrics"))).text
    return sum(float(line.split()[-1]) for line in text.splitlines()
               if line.startswith("responsa_tokens_total") and 'kind="output"' in line)  # fmt: skip


def test_a_batch_made_here_is_shared_by_the_processes(places: Pair, request: pytest.FixtureRequest) -> None:
    """Each process claims lines by lease (three at a time here): the batch completes with every line's
    result once, and on replicas the one it was made on ran some of its lines, not all (its own token
    counter grew by less than the batch's output)."""
    import io

    with places() as (one, two):
        a, b = one.openai(), two.openai()
        before = [_output_tokens(one)]
        text = "\n".join(json.dumps({"custom_id": f"r{index}", "method": "POST", "url": "/v1/responses",
                                     "body": {"model": "sim", "input": LONG, "max_output_tokens": 30}})
                         for index in range(16))  # fmt: skip
        file = a.files.create(file=("in.jsonl", io.BytesIO(text.encode())), purpose="batch")
        batch = a.batches.create(input_file_id=file.id, endpoint="/v1/responses", completion_window="24h")
        deadline = time.monotonic() + 120
        while (seen := b.batches.retrieve(batch.id)).status != "completed":
            assert seen.status in ("validating", "in_progress", "finalizing") and time.monotonic() < deadline
            time.sleep(0.1)
        assert seen.request_counts is not None and (seen.request_counts.completed, seen.request_counts.total) == (
            16,
            16,
        )
        assert seen.output_file_id is not None
        output = [json.loads(entry) for entry in a.files.content(seen.output_file_id).text.splitlines()]
        assert sorted(entry["custom_id"] for entry in output) == sorted(f"r{index}" for index in range(16))
        if "replicas" in request.node.callspec.id:  # (every process on the database shares the work: in the
            # full suite, the PostgreSQL server of tests/conftest.py too, so the other replica may run none)
            total = sum(entry["response"]["body"]["usage"]["output_tokens"] for entry in output)
            assert 0 < _output_tokens(one) - before[0] < total, "the replica it was made on ran every line"
