"""``--conversations-on-first-use``: a client that names its own conversations (mlxcel's, seed 002)
begins one by using it, on both stores; without the flag OpenAI's errors stay."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import httpx
import openai
import pytest

from responsa.config import ApiKey, Settings
from tests.conftest import serve


@pytest.fixture
def named(fresh_db_url: str) -> Settings:
    keys = (ApiKey("key-a", "a"), ApiKey("key-b", "b"))
    return Settings(db_url=fresh_db_url, conversations_on_first_use=True, api_keys=keys)


def test_a_named_conversation_begins_on_first_use_and_keeps_its_turns(named: Settings) -> None:
    with serve(named) as live, openai.OpenAI(base_url=live.v1, api_key="key-a", max_retries=0) as client:
        first = client.responses.create(model="sim", input="hello", conversation="thread-42")
        second = client.responses.create(model="sim", input="again", conversation={"id": "thread-42"})
        assert (first.status, second.status) == ("completed", "completed")
        assert client.conversations.retrieve("thread-42").id == "thread-42"
        items = client.conversations.items.list("thread-42", order="asc").data
        said = [
            part.text for item in items if item.type == "message" for part in item.content if part.type == "input_text"
        ]  # type: ignore[union-attr]
        assert said == ["hello", "again"]  # both turns, in order, under the client's id
        made = client.responses.create(model="sim", input="hi", conversation={"id": "conv_thread42"})
        assert client.conversations.retrieve("conv_thread42").id == "conv_thread42" and made.status == "completed"
        with pytest.raises(openai.BadRequestError) as caught:
            client.responses.create(model="sim", input="hi", conversation="no/slashes")
        assert (caught.value.code, caught.value.param) == ("invalid_conversation_id", "conversation")


def test_only_a_stored_turn_begins_a_named_conversation(named: Settings) -> None:
    with serve(named) as live, openai.OpenAI(base_url=live.v1, api_key="key-a", max_retries=0) as client:
        assert client.responses.input_tokens.count(model="sim", input="hello", conversation="counted-only").input_tokens
        with pytest.raises(openai.InternalServerError):  # the model fails the turn: nothing to keep
            client.responses.create(model="sim", input="hi", conversation="failed-only",
                                    extra_headers={"x-responsa-fault": "server_error"})  # fmt: skip
        for never in ("counted-only", "failed-only"):
            with pytest.raises(openai.NotFoundError):
                client.conversations.retrieve(never)


def test_first_uses_at_once_begin_one_conversation_and_other_tenants_cannot_take_it(named: Settings) -> None:
    with serve(named) as live:

        def turn(word: str) -> int:
            body = {"model": "sim", "input": word, "conversation": "shared-thread"}
            headers = {"authorization": "Bearer key-a"}
            return httpx.post(f"{live.v1}/responses", json=body, headers=headers, timeout=30).status_code

        with ThreadPoolExecutor(6) as pool:
            assert list(pool.map(turn, [f"w{i}" for i in range(6)])) == [200] * 6
        with openai.OpenAI(base_url=live.v1, api_key="key-a", max_retries=0) as alice:
            items = alice.conversations.items.list("shared-thread", limit=100).data
            assert len([item for item in items if item.type == "message"]) == 12  # six turns, none lost
        with openai.OpenAI(base_url=live.v1, api_key="key-b", max_retries=0) as bob:
            with pytest.raises(openai.ConflictError) as caught:
                bob.responses.create(model="sim", input="mine?", conversation="shared-thread")
            assert caught.value.code == "conversation_id_taken"
            with pytest.raises(openai.NotFoundError):
                bob.conversations.retrieve("shared-thread")  # still alice's alone


def test_without_the_flag_openai_s_errors_stay(fresh_db_url: str) -> None:
    with (
        serve(Settings(db_url=fresh_db_url)) as live,
        openai.OpenAI(base_url=live.v1, api_key="-", max_retries=0) as client,
    ):
        with pytest.raises(openai.BadRequestError) as refused:
            client.responses.create(model="sim", input="hello", conversation="thread-42")
        assert refused.value.code == "invalid_conversation_id"
        with pytest.raises(openai.NotFoundError):
            client.responses.create(model="sim", input="hello", conversation={"id": "conv_thread42"})
