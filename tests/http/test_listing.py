"""GET /v1/responses: the caller's stored responses, newest first, with cursor paging (``after``,
``before``, ``limit``, ``order``) and filters (``model``, ``status``, ``metadata[KEY]``,
``created_after`` / ``created_before``, ``previous_response_id``); other tenants' are never listed."""

from __future__ import annotations

import secrets
import time
from collections.abc import Iterator
from typing import Any

import httpx
import openai
import pytest

from responsa.config import ApiKey
from tests.conftest import LiveServer, sqlite_server
from tests.in_process import in_process_client, in_process_http  # noqa: F401  # client, http: the app in process


def _listed(http: httpx.Client, **params: Any) -> dict[str, Any]:
    reply = http.get("/v1/responses", params=params)
    assert reply.status_code == 200, reply.text
    body: dict[str, Any] = reply.json()
    assert body["object"] == "list"
    return body


def _ids(body: dict[str, Any]) -> list[str]:
    return [response["id"] for response in body["data"]]


def test_newest_first_with_cursor_paging_and_filters(client: openai.OpenAI, http: httpx.Client) -> None:
    batch = secrets.token_hex(6)
    scope = {"metadata[batch]": batch}
    created = []
    for model in ("sim", "sim-large", "sim", "sim-large", "sim"):
        created.append(client.responses.create(model=model, input="Reply with: ok", metadata={"batch": batch}))
    follow_up = client.responses.create(model="sim", input="Reply with: again", previous_response_id=created[0].id,
                                        metadata={"batch": batch, "kind": "follow-up"})  # fmt: skip
    everything = [follow_up.id, *reversed([r.id for r in created])]

    pages, after = [], None
    while True:
        body = _listed(http, limit=2, **scope, **({"after": after} if after else {}))
        pages.append(_ids(body))
        assert body["first_id"] == body["data"][0]["id"] and body["last_id"] == body["data"][-1]["id"]
        if not body["has_more"]:
            break
        after = body["last_id"]
    assert pages == [everything[0:2], everything[2:4], everything[4:6]]
    assert _ids(_listed(http, order="asc", **scope)) == everything[::-1]
    assert _ids(_listed(http, before=everything[3], **scope)) == everything[:3]

    # Each entry is the stored response, as retrieve returns it (outputs included, inputs not).
    listed = _listed(http, **scope)["data"]
    assert listed[0] == http.get(f"/v1/responses/{follow_up.id}").json()
    assert listed[0]["output_text"] == "again" and "input" not in listed[0]

    assert _ids(_listed(http, model="sim-large", **scope)) == [created[3].id, created[1].id]
    assert _ids(_listed(http, previous_response_id=created[0].id, **scope)) == [follow_up.id]
    assert _ids(_listed(http, **{"metadata[kind]": "follow-up"}, **scope)) == [follow_up.id]
    assert len(_listed(http, status="completed", **scope)["data"]) == 6
    assert _listed(http, status="failed", **scope)["data"] == []
    now = int(time.time())
    assert _listed(http, created_after=now + 60, **scope)["data"] == []
    assert len(_listed(http, created_after=now - 600, created_before=now + 60, **scope)["data"]) == 6

    conversation = client.conversations.create()
    inside = [client.responses.create(model="sim", input=f"Reply with: {word}", conversation=conversation.id)
              for word in ("one", "two")]  # fmt: skip
    assert _ids(_listed(http, conversation=conversation.id, order="asc")) == [r.id for r in inside]
    assert _listed(http, conversation="conv_missing")["data"] == []


def test_bad_listing_parameters_are_400s(http: httpx.Client) -> None:
    for params, param in (({"status": "done"}, "status"), ({"limit": "0"}, "limit"),
                          ({"created_after": "yesterday"}, "created_after"), ({"order": "up"}, "order")):  # fmt: skip
        reply = http.get("/v1/responses", params=params)
        assert reply.status_code == 400
        assert reply.json()["error"]["param"] == param


@pytest.fixture(scope="module")
def two_tenants(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveServer]:
    keys = (ApiKey("sk-alice", "alice"), ApiKey("sk-bob", "bob"))
    yield from sqlite_server(tmp_path_factory, "tenants", api_keys=keys, embedded=False)


def test_a_tenant_lists_only_its_own(two_tenants: LiveServer) -> None:
    ids = {}
    for key in ("sk-alice", "sk-bob"):
        with openai.OpenAI(base_url=two_tenants.v1, api_key=key, max_retries=0) as sdk:
            ids[key] = sdk.responses.create(model="sim", input="Reply with: mine").id
    for key, other in (("sk-alice", "sk-bob"), ("sk-bob", "sk-alice")):
        listed = httpx.get(f"{two_tenants.v1}/responses", headers={"authorization": f"Bearer {key}"}).json()
        assert _ids(listed) == [ids[key]]
        assert ids[other] not in _ids(listed)
