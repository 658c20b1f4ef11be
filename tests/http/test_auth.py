"""API keys: 401 without a valid one, and every object isolated per tenant on every path."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import httpx
import openai
import pytest

from responsa.config import ApiKey, Settings
from tests.conftest import LiveServer, serve

ALICE = ApiKey("key-alice", "alice")
BOB = ApiKey("key-bob", "bob")


@pytest.fixture(scope="module")
def locked(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveServer]:
    db = tmp_path_factory.mktemp("auth") / "responsa.db"
    with serve(Settings(db_url=f"sqlite:///{db}", api_keys=(ALICE, BOB, ApiKey.bare("plain-key")))) as live:
        yield live


def sdk(live: LiveServer, key: ApiKey) -> openai.OpenAI:
    return openai.OpenAI(base_url=live.v1, api_key=key.key, max_retries=0)


def test_missing_and_wrong_keys_are_401(locked: LiveServer) -> None:
    for headers in ({}, {"authorization": "Bearer nope"}, {"authorization": "Basic key-alice"}):
        reply = httpx.post(f"{locked.v1}/responses", json={"model": "sim", "input": "hi"}, headers=headers)
        assert reply.status_code == 401
        error = reply.json()["error"]
        assert (error["type"], error["code"]) == ("authentication_error", "invalid_api_key")
    with (
        openai.OpenAI(base_url=locked.v1, api_key="wrong", max_retries=0) as wrong,
        pytest.raises(openai.AuthenticationError),
    ):
        wrong.models.list()
    assert httpx.get(f"{locked.url}/health").status_code == 200


def test_configured_keys_work(locked: LiveServer) -> None:
    for key in (ALICE, BOB, ApiKey.bare("plain-key")):
        with sdk(locked, key) as client:
            assert client.responses.create(model="sim", input="Reply with: in").output_text == "in"


def test_another_tenant_gets_404_on_every_path(locked: LiveServer) -> None:
    with sdk(locked, ALICE) as alice:
        response = alice.responses.create(model="sim", input="Reply with: alice's")
        conversation = alice.conversations.create(items=[{"role": "user", "content": "private"}])
        item_id = alice.conversations.items.list(conversation.id).data[0].id
        background = alice.responses.create(model="sim", input="Reply with: later", background=True)
        snapshot = alice.responses.retrieve(response.id).model_dump()
    bob = httpx.Client(base_url=locked.v1, headers={"authorization": f"Bearer {BOB.key}"}, timeout=30)
    attempts: list[tuple[str, str, dict[str, Any] | None, dict[str, str] | None]] = [
        ("GET", f"/responses/{response.id}", None, None),
        ("DELETE", f"/responses/{response.id}", None, None),
        ("POST", f"/responses/{response.id}/cancel", None, None),
        ("GET", f"/responses/{response.id}/input_items", None, None),
        ("GET", f"/responses/{background.id}", None, {"stream": "true"}),
        ("POST", "/responses", {"model": "sim", "input": "x", "previous_response_id": response.id}, None),
        ("POST", "/responses", {"model": "sim", "input": "x", "conversation": conversation.id}, None),
        ("POST", "/responses", {"model": "sim", "input": [{"type": "item_reference", "id": item_id}]}, None),
        ("GET", f"/conversations/{conversation.id}", None, None),
        ("POST", f"/conversations/{conversation.id}", {"metadata": {"x": "y"}}, None),
        ("DELETE", f"/conversations/{conversation.id}", None, None),
        ("GET", f"/conversations/{conversation.id}/items", None, None),
        ("POST", f"/conversations/{conversation.id}/items", {"items": [{"role": "user", "content": "x"}]}, None),
        ("GET", f"/conversations/{conversation.id}/items/{item_id}", None, None),
        ("DELETE", f"/conversations/{conversation.id}/items/{item_id}", None, None),
    ]
    for method, path, body, params in attempts:
        reply = bob.request(method, path, json=body, params=params)
        assert reply.status_code == 404, (method, path, reply.text)
    bob.close()
    with sdk(locked, ALICE) as alice:
        assert alice.responses.retrieve(response.id).model_dump() == snapshot
        assert [i.id for i in alice.conversations.items.list(conversation.id).data] == [item_id]
        assert alice.conversations.retrieve(conversation.id).metadata == {}
        follow = alice.responses.create(model="sim", input="Reply with: mine", previous_response_id=response.id)
        assert follow.status == "completed"
        events = []
        with httpx.stream("GET", f"{locked.v1}/responses/{background.id}", params={"stream": "true"},
                          headers={"authorization": f"Bearer {ALICE.key}"}) as reply:  # fmt: skip
            events = [json.loads(line[6:]) for line in reply.iter_lines() if line.startswith("data: {")]
        assert events[-1]["type"] == "response.completed"
