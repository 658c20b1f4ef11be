"""Retention: TTLs and entry caps for responses and conversations; expiry takes the items along."""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import httpx
import openai
import pytest

from responsa.config import Settings
from tests.conftest import serve


def rows(db: Path, table: str) -> int:
    with sqlite3.connect(db) as conn:
        return int(conn.execute(f"SELECT count(*) FROM {table}").fetchone()[0])


def eventually(check: Callable[[], bool], seconds: float = 10) -> bool:
    deadline = time.monotonic() + seconds
    while not check():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)
    return True


@pytest.fixture
def sdk_for() -> Iterator[Callable[[str], openai.OpenAI]]:
    clients: list[openai.OpenAI] = []

    def make(base_url: str) -> openai.OpenAI:
        clients.append(openai.OpenAI(base_url=base_url, api_key="x", max_retries=0))
        return clients[-1]

    yield make
    for sdk in clients:
        sdk.close()


def test_ttl_expires_responses_and_conversations_with_their_items(
    db_path: Path, sdk_for: Callable[[str], openai.OpenAI]
) -> None:
    settings = Settings(db_url=f"sqlite:///{db_path}", responses_store_ttl_secs=1, conversation_store_ttl_secs=1)
    with serve(settings) as live:
        sdk = sdk_for(live.v1)
        conversation = sdk.conversations.create(items=[{"role": "user", "content": "hello"}])
        response = sdk.responses.create(model="sim", input="Reply with: short-lived", conversation=conversation.id)
        assert sdk.responses.retrieve(response.id).id == response.id
        assert rows(db_path, "response_items") > 0 and rows(db_path, "conversation_items") == 3

        def gone() -> bool:
            try:
                sdk.responses.retrieve(response.id)
            except openai.NotFoundError:
                return True
            return False

        assert eventually(gone)
        with pytest.raises(openai.NotFoundError):
            sdk.conversations.retrieve(conversation.id)
        with pytest.raises(openai.NotFoundError):
            sdk.conversations.items.list(conversation.id)
        tables = ("responses", "response_items", "conversations", "conversation_items")
        assert eventually(lambda: all(rows(db_path, table) == 0 for table in tables))


def test_caps_evict_the_oldest(db_path: Path, sdk_for: Callable[[str], openai.OpenAI]) -> None:
    settings = Settings(db_url=f"sqlite:///{db_path}", responses_store_max_entries=2, conversation_store_max_entries=1)
    with serve(settings) as live:
        sdk = sdk_for(live.v1)
        made = [sdk.responses.create(model="sim", input=f"Reply with: r{i}") for i in range(3)]
        with pytest.raises(openai.NotFoundError):
            sdk.responses.retrieve(made[0].id)
        assert [sdk.responses.retrieve(r.id).output_text for r in made[1:]] == ["r1", "r2"]
        assert rows(db_path, "responses") == 2
        first = sdk.conversations.create(items=[{"role": "user", "content": "a"}])
        second = sdk.conversations.create()
        with pytest.raises(openai.NotFoundError):
            sdk.conversations.retrieve(first.id)
        assert sdk.conversations.retrieve(second.id).id == second.id
        assert rows(db_path, "conversation_items") == 0


def test_zero_caps_disable_storage(db_path: Path, sdk_for: Callable[[str], openai.OpenAI]) -> None:
    settings = Settings(db_url=f"sqlite:///{db_path}", responses_store_max_entries=0, conversation_store_max_entries=0)
    with serve(settings) as live:
        reply = httpx.post(f"{live.v1}/responses", json={"model": "sim", "input": "Reply with: x"}).json()
        assert reply["store"] is False and reply["output_text"] == "x"
        assert httpx.get(f"{live.v1}/responses/{reply['id']}").status_code == 404
        assert httpx.post(f"{live.v1}/conversations", json={}).status_code == 400
        assert rows(db_path, "responses") == 0


def test_store_false_leaves_nothing_behind(db_path: Path, sdk_for: Callable[[str], openai.OpenAI]) -> None:
    with serve(Settings(db_url=f"sqlite:///{db_path}")) as live:
        sdk = sdk_for(live.v1)
        sdk.responses.create(model="sim", input="Reply with: x", store=False)
        with sdk.responses.stream(model="sim", input="Reply with: y", store=False) as stream:
            stream.get_final_response()
        for table in ("responses", "response_items", "conversations", "conversation_items"):
            assert rows(db_path, table) == 0, table
