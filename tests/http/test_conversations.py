"""The Conversations API through the SDK's ``conversations.*`` calls, and responses threaded through it."""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from functools import partial
from typing import Any

import httpx
import openai
import pytest

from tests.http.test_streaming import WEATHER_TOOL


def test_create_retrieve_update_delete(app_client: openai.OpenAI) -> None:
    created = app_client.conversations.create(metadata={"project": "support", "user": "u1"})
    assert created.id.startswith("conv_") and created.object == "conversation"
    assert app_client.conversations.retrieve(created.id).model_dump() == created.model_dump()
    updated = app_client.conversations.update(created.id, metadata={"status": "open", "project": None})  # type: ignore[dict-item]
    assert updated.metadata == {"user": "u1", "status": "open"}
    assert app_client.conversations.retrieve(created.id).metadata == {"user": "u1", "status": "open"}
    deleted = app_client.conversations.delete(created.id)
    assert (deleted.id, deleted.object, deleted.deleted) == (created.id, "conversation.deleted", True)
    with pytest.raises(openai.NotFoundError):
        app_client.conversations.retrieve(created.id)
    with pytest.raises(openai.NotFoundError):
        app_client.conversations.delete(created.id)


def test_metadata_limits_hold_on_create_and_after_merge(app_client: openai.OpenAI, app_http: httpx.Client) -> None:
    reply = app_http.post("/v1/conversations", json={"metadata": {f"k{i}": "v" for i in range(17)}})
    assert reply.status_code == 400 and reply.json()["error"]["param"] == "metadata"
    created = app_client.conversations.create(metadata={f"k{i}": "v" for i in range(16)})
    reply = app_http.post(f"/v1/conversations/{created.id}", json={"metadata": {"one_more": "x"}})
    assert reply.status_code == 400 and reply.json()["error"]["param"] == "metadata"
    assert len(app_client.conversations.retrieve(created.id).metadata) == 16  # type: ignore[arg-type]
    cleared = app_http.post(f"/v1/conversations/{created.id}", json={"metadata": None}).json()
    assert cleared["metadata"] == {}


def test_initial_items_and_item_crud(app_client: openai.OpenAI) -> None:
    conversation = app_client.conversations.create(items=[{"role": "user", "content": "Hello"}])
    added = app_client.conversations.items.create(
        conversation.id,
        items=[
            {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "Hi!"}]},
            {"role": "user", "content": "How are you?"},
        ],
    )
    assert [item.type for item in added.data] == ["message", "message"]
    assert all(item.id.startswith("msg_") for item in added.data)
    listed = app_client.conversations.items.list(conversation.id, order="asc")
    texts = [item.content[0].text for item in listed.data]  # type: ignore[union-attr]
    assert texts == ["Hello", "Hi!", "How are you?"]
    newest_first = app_client.conversations.items.list(conversation.id)
    assert [item.id for item in newest_first.data] == [item.id for item in reversed(listed.data)]
    one = app_client.conversations.items.retrieve(added.data[0].id, conversation_id=conversation.id)
    assert one.model_dump() == added.data[0].model_dump()
    after_delete = app_client.conversations.items.delete(added.data[0].id, conversation_id=conversation.id)
    assert after_delete.id == conversation.id and after_delete.object == "conversation"
    with pytest.raises(openai.NotFoundError):
        app_client.conversations.items.retrieve(added.data[0].id, conversation_id=conversation.id)
    assert len(app_client.conversations.items.list(conversation.id).data) == 2


def test_items_limits_and_paging(app_client: openai.OpenAI, app_http: httpx.Client) -> None:
    conversation = app_client.conversations.create()
    too_many = [{"role": "user", "content": f"m{i}"} for i in range(21)]
    reply = app_http.post(f"/v1/conversations/{conversation.id}/items", json={"items": too_many})
    assert reply.status_code == 400 and reply.json()["error"]["param"] == "items"
    assert app_http.post(f"/v1/conversations/{conversation.id}/items", json={"items": []}).status_code == 400
    for start in (0, 20, 40):
        batch = [{"role": "user", "content": f"m{i}"} for i in range(start, start + 20)]
        app_client.conversations.items.create(conversation.id, items=batch)  # type: ignore[arg-type]
    page = app_http.get(f"/v1/conversations/{conversation.id}/items").json()
    assert len(page["data"]) == 60 and page["has_more"] is False  # default limit is 100
    page = app_http.get(f"/v1/conversations/{conversation.id}/items", params={"limit": 25, "order": "asc"}).json()
    assert page["data"][0]["content"][0]["text"] == "m0" and page["has_more"] is True
    rest = app_http.get(
        f"/v1/conversations/{conversation.id}/items", params={"limit": 100, "order": "asc", "after": page["last_id"]}
    ).json()
    assert rest["data"][0]["content"][0]["text"] == "m25" and len(rest["data"]) == 35 and rest["has_more"] is False
    walked = [item.content[0].text for item in app_client.conversations.items.list(conversation.id, limit=7)]  # type: ignore[union-attr]
    assert walked == [f"m{i}" for i in reversed(range(60))]


def test_every_item_type_round_trips(app_client: openai.OpenAI, app_http: httpx.Client) -> None:
    source = app_client.responses.create(model="sim", input="Reply with: referenced text")
    items: list[dict[str, Any]] = [
        {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "Find docs"}]},
        {"type": "reasoning", "id": "rs_1", "summary": [{"type": "summary_text", "text": "Need a search."}]},
        {"type": "mcp_list_tools", "id": "mcpl_1", "server_label": "docs",
         "tools": [{"name": "search", "input_schema": {"type": "object"}}]},
        {"type": "mcp_call", "id": "mcp_1", "server_label": "docs", "name": "search", "arguments": "{}",
         "output": "3 hits"},
        {"type": "function_call", "call_id": "call_1", "name": "lookup", "arguments": "{\"q\":\"x\"}"},
        {"type": "function_call_output", "call_id": "call_1", "output": "found"},
        {"type": "item_reference", "id": source.output[0].id},
    ]  # fmt: skip
    conversation = app_client.conversations.create()
    reply = app_http.post(f"/v1/conversations/{conversation.id}/items", json={"items": items})
    assert reply.status_code == 200, reply.text
    listed = app_http.get(f"/v1/conversations/{conversation.id}/items", params={"order": "asc"}).json()["data"]
    assert [item["type"] for item in listed] == [
        "message", "reasoning", "mcp_list_tools", "mcp_call", "function_call", "function_call_output", "message"
    ]  # fmt: skip
    assert all(isinstance(item.pop("created_at"), int) for item in listed)  # every item is stamped, as SGLang's
    assert listed[2] == items[2] and listed[3] == items[3]
    assert listed[4]["arguments"] == '{"q":"x"}' and listed[4]["id"].startswith("fc_")
    # An item_reference adds a copy with its own id; the referenced item stays where it was.
    assert listed[6]["id"] != source.output[0].id and listed[6]["id"].startswith("msg_")
    assert listed[6]["content"][0]["text"] == "referenced text"
    assert app_client.responses.retrieve(source.id).output[0].id == source.output[0].id


def test_every_item_has_its_own_id_to_fetch_and_delete_it_by(app_client: openai.OpenAI, app_http: httpx.Client) -> None:
    """MCP items and tool calls sent without ids get one, and can be fetched and deleted one by one."""
    items: list[dict[str, Any]] = [
        {"type": "mcp_list_tools", "server_label": "docs", "tools": [{"name": "search", "input_schema": {}}]},
        {"type": "mcp_call", "server_label": "docs", "name": "search", "arguments": "{}", "output": "3 hits"},
        {"type": "mcp_approval_request", "server_label": "docs", "name": "search", "arguments": "{}"},
        {"type": "custom_tool_call", "call_id": "c1", "name": "patch", "input": "x"},
        {"type": "custom_tool_call_output", "call_id": "c1", "output": "ok"},
    ]  # fmt: skip
    conversation = app_client.conversations.create()
    added = app_http.post(f"/v1/conversations/{conversation.id}/items", json={"items": items}).json()["data"]
    ids = [item["id"] for item in added]
    assert all(ids) and len(set(ids)) == len(items)
    assert [item_id.split("_")[0] for item_id in ids] == ["mcpl", "mcp", "mcpr", "ctc", "ctco"]
    for item_id, sent in zip(ids, items, strict=True):
        fetched = app_http.get(f"/v1/conversations/{conversation.id}/items/{item_id}").json()
        assert fetched["type"] == sent["type"] and isinstance(fetched["created_at"], int)
    assert app_http.delete(f"/v1/conversations/{conversation.id}/items/{ids[1]}").status_code == 200
    left = [item["id"] for item in app_http.get(f"/v1/conversations/{conversation.id}/items").json()["data"]]
    assert sorted(left) == sorted(ids[:1] + ids[2:])
    assert app_http.get(f"/v1/conversations/{conversation.id}/items/{ids[1]}").status_code == 404


def test_responses_append_their_items_in_order(app_client: openai.OpenAI) -> None:
    conversation = app_client.conversations.create()
    first = app_client.responses.create(model="sim", input="Reply with: first answer", conversation=conversation.id)
    assert first.conversation is not None and first.conversation.id == conversation.id
    with app_client.responses.stream(
        model="sim", input="Reply with: second answer", conversation={"id": conversation.id}
    ) as stream:
        second = stream.get_final_response()
    items = app_client.conversations.items.list(conversation.id, order="asc").data
    assert [(item.role, item.content[0].text) for item in items] == [  # type: ignore[union-attr]
        ("user", "Reply with: first answer"),
        ("assistant", "first answer"),
        ("user", "Reply with: second answer"),
        ("assistant", "second answer"),
    ]
    assert items[1].id == first.output[0].id and items[3].id == second.output[0].id
    assert items[0].id == app_client.responses.input_items.list(first.id).data[0].id
    assert app_client.responses.retrieve(second.id).conversation.id == conversation.id  # type: ignore[union-attr]


def test_conversation_items_are_the_context(app_client: openai.OpenAI) -> None:
    conversation = app_client.conversations.create()
    asked = app_client.responses.create(
        model="sim", input="What's the weather in Nairobi?", tools=[WEATHER_TOOL], conversation=conversation.id
    )
    [call] = asked.output
    assert call.type == "function_call" and json.loads(call.arguments)["location"] == "Nairobi"
    answered = app_client.responses.create(
        model="sim",
        input=[{"type": "function_call_output", "call_id": call.call_id, "output": "Nairobi: 22C, clear"}],
        tools=[WEATHER_TOOL],
        conversation=conversation.id,
    )
    assert "Nairobi: 22C, clear" in answered.output_text
    types = [item.type for item in app_client.conversations.items.list(conversation.id, order="asc").data]
    assert types == ["message", "function_call", "function_call_output", "message"]


def test_a_failed_response_appends_nothing(app_client: openai.OpenAI, app_http: httpx.Client) -> None:
    conversation = app_client.conversations.create(items=[{"role": "user", "content": "start"}])
    reply = app_http.post(
        "/v1/responses",
        json={"model": "sim", "input": "Explain it all", "conversation": conversation.id, "stream": True},
        headers={"x-responsa-fault": "mid_stream"},
    )
    assert '"type":"response.failed"' in reply.text
    assert len(app_client.conversations.items.list(conversation.id).data) == 1


def test_conversation_errors(app_client: openai.OpenAI, app_http: httpx.Client) -> None:
    conversation = app_client.conversations.create()
    cases = [
        ({"conversation": "nope"}, 400, "invalid_conversation_id"),
        ({"conversation": conversation.id, "previous_response_id": "resp_x"}, 400, "mutually_exclusive_parameters"),
        ({"conversation": "conv_missing"}, 404, "not_found"),
        ({"conversation": conversation.id, "store": False}, 400, None),
    ]
    for extra, status, code in cases:
        reply = app_http.post("/v1/responses", json={"model": "sim", "input": "hi", **extra})
        assert reply.status_code == status, extra
        assert reply.json()["error"]["code"] == code
    for method, path in [
        ("GET", "/v1/conversations/conv_missing"),
        ("POST", "/v1/conversations/conv_missing/items"),
        ("GET", "/v1/conversations/conv_missing/items"),
        ("GET", f"/v1/conversations/{conversation.id}/items/msg_missing"),
        ("DELETE", f"/v1/conversations/{conversation.id}/items/msg_missing"),
    ]:
        body = {"items": [{"role": "user", "content": "x"}]} if method == "POST" else None
        assert app_http.request(method, path, json=body).status_code == 404, path
    assert app_client.conversations.items.list(conversation.id).data == []


def test_a_turn_sees_the_conversation_as_it_is_after_edits(app_client: openai.OpenAI) -> None:
    """The server keeps a parsed snapshot of a conversation between turns and reads only what was
    appended since; after each kind of edit a turn's context must still be exactly the conversation's
    items: the same input tokens as the same turn in a new conversation holding those items."""
    words = ["alpha", "beta gamma", "delta epsilon zeta", "eta theta iota kappa"]
    conversation = app_client.conversations.create(items=[{"role": "user", "content": text} for text in words])

    def items_now() -> list[Any]:
        return list(app_client.conversations.items.list(conversation.id, order="asc", limit=100).data)

    def turn_matches_a_fresh_copy(prompt: str) -> None:
        copy = app_client.conversations.create(
            items=[{"role": item.role, "content": item.content[0].text} for item in items_now()]  # type: ignore[union-attr]
        )
        fresh = app_client.responses.create(model="sim", input=prompt, conversation=copy.id, max_output_tokens=8)
        kept = app_client.responses.create(model="sim", input=prompt, conversation=conversation.id, max_output_tokens=8)
        assert kept.usage is not None and fresh.usage is not None
        assert kept.usage.input_tokens == fresh.usage.input_tokens, prompt

    turn_matches_a_fresh_copy("first turn")  # reads the whole conversation
    turn_matches_a_fresh_copy("second turn")  # reads what the first turn appended
    # The snapshot ends where the last turn began: its input and output, and the item before them (the
    # snapshot's last) go; the next item appended takes that item's position.
    for item in items_now()[-3:]:
        app_client.conversations.items.delete(item.id, conversation_id=conversation.id)  # type: ignore[arg-type]
    app_client.conversations.items.create(conversation.id, items=[{"role": "user", "content": "a much longer " * 5}])
    turn_matches_a_fresh_copy("after the snapshot's last item was replaced")
    middle = items_now()[2]
    app_client.conversations.items.delete(middle.id, conversation_id=conversation.id)  # type: ignore[arg-type]
    turn_matches_a_fresh_copy("after a middle item went")
    app_client.conversations.items.create(conversation.id, items=[{"role": "user", "content": "appended"}])
    turn_matches_a_fresh_copy("after an append")


def test_items_and_their_conversation_deleted_at_once(app_client: openai.OpenAI) -> None:
    """Deleting an item counts the removal in its conversation's row (a trigger): with items and the
    conversation itself deleted at the same moment, every call answers 200 or 404 (PostgreSQL would
    abort one of two transactions that lock the row and an item in opposite orders: a 500)."""

    def at_once(calls: list[Callable[[], object]]) -> list[int]:
        barrier, statuses = threading.Barrier(len(calls)), []

        def call(each: Callable[[], object]) -> None:
            barrier.wait()
            try:
                each()
                statuses.append(200)
            except openai.APIStatusError as error:
                statuses.append(error.status_code)

        threads = [threading.Thread(target=call, args=(each,)) for each in calls]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(30)
        return statuses

    for _ in range(6):
        conversation = app_client.conversations.create(
            items=[{"role": "user", "content": f"item {i}"} for i in range(12)]
        )
        items = app_client.conversations.items.list(conversation.id, limit=100).data
        calls: list[Callable[[], object]] = [
            partial(app_client.conversations.items.delete, item.id, conversation_id=conversation.id)  # type: ignore[arg-type]
            for item in items
        ]
        calls.insert(len(calls) // 2, partial(app_client.conversations.delete, conversation.id))
        statuses = at_once(calls)
        assert len(statuses) == len(calls) and set(statuses) <= {200, 404}, statuses
        with pytest.raises(openai.NotFoundError):
            app_client.conversations.retrieve(conversation.id)
