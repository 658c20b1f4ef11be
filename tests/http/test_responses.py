"""Create, retrieve, delete, cancel and list input items through the SDK and raw HTTP."""

from __future__ import annotations

import httpx
import openai
import pytest

from tests.conftest import LiveServer
from tests.in_process import in_process_client, in_process_http  # noqa: F401  # client, http: the app in process


def test_create_returns_a_completed_response_echoing_its_parameters(client: openai.OpenAI) -> None:
    response = client.responses.create(
        model="sim",
        input="Tell me about the history of Rome",
        instructions="Be brief.",
        temperature=0.5,
        top_p=0.9,
        metadata={"ticket": "42"},
        max_output_tokens=200,
        prompt_cache_key="k1",
        safety_identifier="user-7",
        service_tier="auto",
        truncation="disabled",
        store=True,
    )
    assert response.id.startswith("resp_")
    assert response.object == "response"
    assert response.status == "completed"
    assert response.model == "sim"
    assert response.instructions == "Be brief."
    assert (response.temperature, response.top_p) == (0.5, 0.9)
    assert response.metadata == {"ticket": "42"}
    assert response.max_output_tokens == 200
    assert response.prompt_cache_key == "k1"
    assert response.safety_identifier == "user-7"
    assert response.truncation == "disabled"
    assert response.error is None and response.incomplete_details is None
    [message] = response.output
    assert message.type == "message" and message.id.startswith("msg_")
    assert message.role == "assistant" and message.status == "completed"
    assert message.content[0].type == "output_text"
    assert message.content[0].annotations == []
    assert "Rome" in response.output_text
    usage = response.usage
    assert usage is not None
    assert usage.total_tokens == usage.input_tokens + usage.output_tokens
    assert usage.input_tokens_details.cached_tokens == 0
    assert usage.output_tokens_details.reasoning_tokens == 0


def test_output_text_is_in_the_json_body(http: httpx.Client) -> None:
    body = http.post("/v1/responses", json={"model": "sim", "input": "Reply with: pineapple"}).json()
    assert body["output_text"] == "pineapple"
    assert body["output"][0]["content"][0]["text"] == "pineapple"


def test_retrieve_returns_what_create_returned(client: openai.OpenAI) -> None:
    created = client.responses.create(model="sim", input="Describe the Atlantic ocean", extra_body={"seed": 3})
    retrieved = client.responses.retrieve(created.id)
    assert retrieved.model_dump() == created.model_dump()


def test_the_reply_is_the_stored_response_json_for_json(http: httpx.Client) -> None:
    """The reply is the JSON the store saved (dumped once for both): a retrieve gives the same JSON."""
    body = {"model": "sim", "input": "Describe the Pacific ocean", "metadata": {"k": "v"}, "seed": 5, "x_vendor": 1}
    created = http.post("/v1/responses", json=body).json()
    assert created["status"] == "completed" and created["output_text"] and created["metadata"] == {"k": "v"}
    assert http.get(f"/v1/responses/{created['id']}").json() == created


def test_delete_removes_the_response(client: openai.OpenAI) -> None:
    created = client.responses.create(model="sim", input="hello")
    client.responses.delete(created.id)
    with pytest.raises(openai.NotFoundError):
        client.responses.retrieve(created.id)
    with pytest.raises(openai.NotFoundError):
        client.responses.delete(created.id)


def test_delete_returns_the_deleted_object(http: httpx.Client) -> None:
    created = http.post("/v1/responses", json={"model": "sim", "input": "hello"}).json()
    reply = http.delete(f"/v1/responses/{created['id']}")
    assert reply.status_code == 200
    assert reply.json() == {"id": created["id"], "object": "response.deleted", "deleted": True}


def test_unknown_response_is_404_with_openai_error_shape(http: httpx.Client) -> None:
    for method, path in [
        ("GET", "/v1/responses/resp_missing"),
        ("DELETE", "/v1/responses/resp_missing"),
        ("POST", "/v1/responses/resp_missing/cancel"),
        ("GET", "/v1/responses/resp_missing/input_items"),
    ]:
        reply = http.request(method, path)
        assert reply.status_code == 404, path
        error = reply.json()["error"]
        assert set(error) == {"message", "type", "param", "code"}
        assert "resp_missing" in error["message"]


def test_cancelling_a_finished_response_is_a_conflict(http: httpx.Client) -> None:
    created = http.post("/v1/responses", json={"model": "sim", "input": "hello"}).json()
    reply = http.post(f"/v1/responses/{created['id']}/cancel")
    assert reply.status_code == 409
    assert reply.json()["error"]["code"] == "response_not_cancellable"
    assert http.get(f"/v1/responses/{created['id']}").json()["status"] == "completed"


@pytest.mark.parametrize("prefix", ["/v1", "", "/openai/v1", "/v3"])
def test_every_route_is_served_under_each_prefix(server: LiveServer, prefix: str) -> None:
    with openai.OpenAI(base_url=f"{server.url}{prefix}", api_key="x", max_retries=0) as sdk:
        created = sdk.responses.create(model="sim", input="Reply with: ok")
        assert created.output_text == "ok"
        assert sdk.responses.retrieve(created.id).id == created.id
        assert [item.id for item in sdk.responses.input_items.list(created.id)]
        assert "sim" in [model.id for model in sdk.models.list()]
        sdk.responses.delete(created.id)


def test_models_and_health(http: httpx.Client) -> None:
    models = http.get("/v1/models").json()
    assert models["object"] == "list"
    assert {"id": "sim", "object": "model", "created": 0, "owned_by": "responsa"} in models["data"]
    assert http.get("/health").json() == {"status": "ok", "store": {"status": "ok"}}


def test_input_items_lists_normalised_items_with_ids(client: openai.OpenAI) -> None:
    created = client.responses.create(
        model="sim",
        input=[
            {"role": "system", "content": "You are terse."},
            {"role": "user", "content": "first"},
            {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "second"}]},
        ],
    )
    page = client.responses.input_items.list(created.id, order="asc")
    assert [item.role for item in page.data] == ["system", "user", "user"]
    assert all(item.id.startswith("msg_") for item in page.data)
    assert page.data[1].content[0].type == "input_text"
    assert page.data[1].content[0].text == "first"
    assert page.has_more is False
    assert page.first_id == page.data[0].id and page.last_id == page.data[-1].id


def test_input_items_paginate_in_both_orders(client: openai.OpenAI, http: httpx.Client) -> None:
    words = [f"word{i}" for i in range(7)]
    created = client.responses.create(model="sim", input=[{"role": "user", "content": w} for w in words])
    asc = http.get(f"/v1/responses/{created.id}/input_items", params={"order": "asc", "limit": 3}).json()
    assert [i["content"][0]["text"] for i in asc["data"]] == words[:3] and asc["has_more"] is True
    nxt = http.get(
        f"/v1/responses/{created.id}/input_items", params={"order": "asc", "limit": 3, "after": asc["last_id"]}
    ).json()
    assert [i["content"][0]["text"] for i in nxt["data"]] == words[3:6] and nxt["has_more"] is True
    desc = http.get(f"/v1/responses/{created.id}/input_items", params={"limit": 2}).json()
    assert [i["content"][0]["text"] for i in desc["data"]] == ["word6", "word5"]
    before = http.get(
        f"/v1/responses/{created.id}/input_items", params={"order": "asc", "before": nxt["data"][0]["id"]}
    ).json()
    assert [i["content"][0]["text"] for i in before["data"]] == words[:3]
    # The SDK's auto-pagination walks every page.
    listed = [item.content[0].text for item in client.responses.input_items.list(created.id, order="asc", limit=2)]
    assert listed == words


def test_input_items_reject_bad_paging_parameters(http: httpx.Client) -> None:
    created = http.post("/v1/responses", json={"model": "sim", "input": "hi"}).json()
    for params, param in [({"limit": 0}, "limit"), ({"limit": "x"}, "limit"), ({"order": "up"}, "order")]:
        reply = http.get(f"/v1/responses/{created['id']}/input_items", params=params)
        assert reply.status_code == 400
        assert reply.json()["error"]["param"] == param


def test_unknown_and_vendor_items_and_fields_round_trip(http: httpx.Client) -> None:
    vendor_item = {"type": "acme:telemetry", "id": "acme_1", "status": "completed", "payload": {"a": [1, 2]}}
    message = {
        "type": "message",
        "role": "user",
        "content": [{"type": "input_text", "text": "Hello there", "acme:lang": "en"}],
        "acme:priority": "high",
        "acme:note": None,
    }
    reply = http.post(
        "/v1/responses", json={"model": "sim", "input": [vendor_item, message], "acme:trace": True, "future_x": 1}
    )
    assert reply.status_code == 200, reply.text
    listed = http.get(f"/v1/responses/{reply.json()['id']}/input_items", params={"order": "asc"}).json()["data"]
    assert listed[0] == vendor_item
    assert listed[1]["acme:priority"] == "high" and listed[1]["acme:note"] is None  # kept as sent, null too
    assert "phase" not in listed[1]  # a field of ours left unset is absent, not null
    assert listed[1]["content"][0] == {"type": "input_text", "text": "Hello there", "acme:lang": "en"}


def test_input_content_types_are_accepted(client: openai.OpenAI) -> None:
    pixel = (
        "data:image/png;base64,"
        "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg=="
    )
    created = client.responses.create(
        model="sim",
        input=[
            {
                "role": "user",
                "content": [
                    {"type": "input_text", "text": "What is in this picture and file?"},
                    {"type": "input_image", "image_url": pixel, "detail": "low"},
                    {"type": "input_file", "filename": "notes.txt", "file_data": "data:text/plain;base64,aGk="},
                ],
            },
            {"role": "developer", "content": "Answer in English."},
            {"role": "assistant", "content": [{"type": "refusal", "refusal": "I cannot."}]},
        ],
    )
    assert created.status == "completed"
    items = client.responses.input_items.list(created.id, order="asc").data
    assert [part.type for part in items[0].content] == ["input_text", "input_image", "input_file"]
    assert items[0].content[1].image_url == pixel
    assert items[1].role == "developer"
