"""Encrypted reasoning that round-trips (what Codex sends back every turn): this server's blobs are
sealed with its key and open on a replica sharing it and after a restart; another server's are left
out of the model's input and reported in ``input_transformations``, never failing the turn."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import openai

from responsa.config import Settings
from tests.conftest import serve

ASK: dict[str, Any] = {"model": "o4-mini", "include": ["reasoning.encrypted_content"], "store": False,
                       "reasoning": {"effort": "low"}}  # fmt: skip
FOREIGN = "gAAAAABo" + "Q" * 120  # the shape of OpenAI's blobs: no key here opens it


def reasoning_of(response: Any) -> dict[str, Any]:
    (item,) = [item for item in response.output if item.type == "reasoning"]
    return dict(item.to_dict(warnings=False))


def transformations(response: Any) -> list[dict[str, Any]]:
    return [dict(entry.to_dict()) for entry in response.input_transformations or ()]


def next_turn(reasoning: dict[str, Any]) -> list[Any]:
    return [{"role": "user", "content": "Plan the launch."}, reasoning, {"role": "user", "content": "Go on."}]


def test_reasoning_opens_on_a_replica_sharing_the_key_and_after_a_restart(tmp_path: Path) -> None:
    first = Settings(db_url=f"sqlite:///{tmp_path / 'a.db'}", secret_key="shared-secret")
    replica = Settings(db_url=f"sqlite:///{tmp_path / 'b.db'}", secret_key="shared-secret")
    with serve(first) as live, openai.OpenAI(base_url=live.v1, api_key="-", max_retries=0) as client:
        reasoning = reasoning_of(client.responses.create(input="Plan the launch.", **ASK))
    assert reasoning["encrypted_content"].startswith("rsa1.")
    for settings in (replica, first):  # another replica, then the first one started again
        with serve(settings) as live, openai.OpenAI(base_url=live.v1, api_key="-", max_retries=0) as client:
            follow = client.responses.create(input=next_turn(reasoning), **ASK)
        assert follow.status == "completed"
        assert follow.input_transformations is None


def test_the_key_file_beside_the_database_keeps_reasoning_open_across_restarts(tmp_path: Path) -> None:
    settings = Settings(db_url=f"sqlite:///{tmp_path / 'r.db'}")
    with serve(settings) as live, openai.OpenAI(base_url=live.v1, api_key="-", max_retries=0) as client:
        reasoning = reasoning_of(client.responses.create(input="Plan the launch.", **ASK))
    with serve(settings) as live, openai.OpenAI(base_url=live.v1, api_key="-", max_retries=0) as client:
        follow = client.responses.create(input=next_turn(reasoning), **ASK)
    other = Settings(db_url=f"sqlite:///{tmp_path / 'other.db'}")  # its own key file: another server
    with serve(other) as live, openai.OpenAI(base_url=live.v1, api_key="-", max_retries=0) as client:
        elsewhere = client.responses.create(input=next_turn(reasoning), **ASK)
    assert follow.input_transformations is None
    assert elsewhere.status == "completed"
    assert transformations(elsewhere) == [
        {"id": reasoning["id"], "type": "reasoning", "action": "removed", "reason": "organization_mismatch"}
    ]


def test_a_foreign_blob_is_left_out_and_reported_not_a_failure(client: openai.OpenAI) -> None:
    foreign = {"type": "reasoning", "id": "rs_elsewhere", "summary": [], "encrypted_content": FOREIGN}
    plain = {"type": "reasoning", "id": "rs_plain", "summary": [{"type": "summary_text", "text": "Thought."}]}
    asked = [{"role": "user", "content": "Plan the launch."}, foreign, plain, {"role": "user", "content": "Go on."}]
    response = client.responses.create(model="sim", input=asked)  # type: ignore[arg-type]
    assert response.status == "completed"
    assert transformations(response) == [
        {"id": "rs_elsewhere", "type": "reasoning", "action": "removed", "reason": "organization_mismatch"}
    ]
    stored = client.responses.input_items.list(response.id, order="asc").data
    assert [item.id for item in stored if item.type == "reasoning"] == ["rs_elsewhere", "rs_plain"]  # kept as sent


def test_reasoning_is_sealed_only_when_asked_for(client: openai.OpenAI) -> None:
    bare = reasoning_of(client.responses.create(model="o4-mini", input="Plan it.", reasoning={"effort": "low"}))
    assert bare.get("encrypted_content") is None
    sealed = reasoning_of(client.responses.create(input="Plan it.", **ASK))
    assert sealed["encrypted_content"].startswith("rsa1.") and "Plan" not in sealed["encrypted_content"]
