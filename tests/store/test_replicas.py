"""Several responsa processes on one PostgreSQL database behave as one service."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from collections.abc import Iterator

import httpx
import openai
import pytest

from tests.conftest import free_port, wait_until_answering

LONG = "Write at length about the history of navigation and the stars"


@pytest.fixture(scope="module")
def replicas(postgres_url: str) -> Iterator[tuple[str, str]]:
    processes, urls = [], []
    try:
        for _ in range(2):
            port = free_port()
            command = [sys.executable, "-m", "responsa.cli", "serve", "--port", str(port), "--db", postgres_url,
                       "--no-embedded", "--sim-token-delay-ms", "15"]  # fmt: skip
            process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            processes.append(process)
            wait_until_answering(f"http://127.0.0.1:{port}/health", process)
            urls.append(f"http://127.0.0.1:{port}/v1")
        yield urls[0], urls[1]
    finally:
        for process in processes:
            process.terminate()
            process.wait(15)


def test_create_here_retrieve_chain_and_list_there(replicas: tuple[str, str]) -> None:
    one, two = replicas
    with (
        openai.OpenAI(base_url=one, api_key="x", max_retries=0) as a,
        openai.OpenAI(base_url=two, api_key="x", max_retries=0) as b,
    ):
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


def test_an_item_removed_there_leaves_the_next_turn_here(replicas: tuple[str, str]) -> None:
    """A process keeps a parsed snapshot of a conversation between its turns: an item another process
    removed in the meantime must be gone from this one's next turn (the same input tokens as the same
    turn in a new conversation holding the items that remain)."""
    one, two = replicas
    with openai.OpenAI(base_url=one, api_key="x") as a, openai.OpenAI(base_url=two, api_key="x") as b:
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


def test_a_response_deleted_there_leaves_a_chain_read_here(replicas: tuple[str, str]) -> None:
    """A process caches the contexts of chains it read: a response another process deleted must not
    feed the next turn here (the same input tokens as the same turn made on the other process)."""
    one, two = replicas
    with openai.OpenAI(base_url=one, api_key="x") as a, openai.OpenAI(base_url=two, api_key="x") as b:
        first = a.responses.create(model="sim", input="Remember the word albatross and the number seven.")
        second = a.responses.create(model="sim", input="And a colour: teal.", previous_response_id=first.id)
        cached = a.responses.create(model="sim", input="next", previous_response_id=second.id)  # caches the chain
        b.responses.delete(first.id)
        there = b.responses.create(model="sim", input="next", previous_response_id=second.id)
        here = a.responses.create(model="sim", input="next", previous_response_id=second.id)
        assert here.usage is not None and there.usage is not None and cached.usage is not None
        assert here.usage.input_tokens == there.usage.input_tokens < cached.usage.input_tokens


def test_background_on_one_resumed_and_cancelled_on_the_other(replicas: tuple[str, str]) -> None:
    one, two = replicas
    started = httpx.post(f"{one}/responses", json={"model": "sim", "input": LONG, "background": True,
                                                    "max_output_tokens": 3000}).json()  # fmt: skip
    seen: list[dict[str, object]] = []
    with httpx.stream("GET", f"{two}/responses/{started['id']}", params={"stream": "true", "starting_after": "1"},
                      timeout=60) as reply:  # fmt: skip
        for line in reply.iter_lines():
            if line.startswith("data: {"):
                seen.append(json.loads(line[6:]))
                if len(seen) == 10:
                    break
    assert [e["sequence_number"] for e in seen] == list(range(2, 12))
    cancelled = httpx.post(f"{two}/responses/{started['id']}/cancel", timeout=30).json()
    assert cancelled["status"] == "cancelled"
    time.sleep(0.3)
    on_one = httpx.get(f"{one}/responses/{started['id']}").json()
    assert on_one["status"] == "cancelled" and on_one["output"][0]["status"] == "incomplete"
