"""Schema-based fuzzing of every route the server documents at ``/openapi.json`` (schemathesis,
bounded examples per operation): every answer is a success or an OpenAI-shaped error, never a 5xx,
never a hang. Defects it found are kept as regression tests next to the code they concern (e.g.
tests/http/test_errors.py::test_a_type_that_is_not_a_string_is_a_400)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import httpx
import jsonschema
import pytest
import schemathesis
from hypothesis import HealthCheck, given, settings

from responsa.config import ApiKey, Settings
from tests.conftest import LiveServer, serve

EXAMPLES_PER_OPERATION = 40
REQUEST_TIMEOUT_SECONDS = 15
KEY = ApiKey("sk-fuzz", "fuzz")
ADMIN = "sk-admin-fuzz"
"""A project's key for the API, the admin key for the Admin API (each refuses the other's paths)."""


def _auth(path: str) -> dict[str, str]:
    return {"authorization": f"Bearer {ADMIN if path.startswith('/v1/organization') else KEY.key}"}


@pytest.fixture(scope="module")
def fuzzed_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveServer]:
    db = tmp_path_factory.mktemp("fuzz") / "fuzz.db"
    with serve(Settings(db_url=f"sqlite:///{db}", embedded=False, api_keys=(KEY,), admin_key=ADMIN)) as live:
        yield live


def test_the_document_lists_every_v1_route(fuzzed_server: LiveServer) -> None:
    document = httpx.get(f"{fuzzed_server.url}/openapi.json").json()
    assert document["openapi"].startswith("3.1")
    operations = {(method.upper(), path) for path, item in document["paths"].items() for method in item}
    assert {("POST", "/v1/responses"), ("GET", "/v1/responses/{response_id}"), ("POST", "/v1/conversations"),
            ("POST", "/v1/files"), ("POST", "/v1/containers"), ("GET", "/health")} <= operations  # fmt: skip
    assert len(operations) >= 50
    body = document["paths"]["/v1/responses"]["post"]["requestBody"]["content"]["application/json"]["schema"]
    assert document["components"]["schemas"][body["$ref"].rsplit("/", 1)[1]]["properties"]["input"]


def test_the_documented_bodies_accept_the_items_the_server_takes(fuzzed_server: LiveServer) -> None:
    """Items are told apart by the server's rule (``type``, or a ``role`` alone for a message), and
    their schemas overlap (``type`` has a default, an unknown type is kept): the document says
    ``anyOf`` for them, and ``oneOf`` only with a discriminator. Under ``oneOf`` a typed message also
    matched ``UnknownItem``, so the document refused every such body (and the fuzzer found none)."""
    document = httpx.get(f"{fuzzed_server.url}/openapi.json").json()
    unions = [node for node in _nodes(document) if "oneOf" in node]
    assert all("discriminator" in union for union in unions)
    body = {"items": [{"type": "message", "role": "user", "content": "hi"}, {"role": "assistant", "content": "hello"},
                      {"type": "function_call_output", "call_id": "c1", "output": "42"}, {"type": "acme:thing"}]}  # fmt: skip
    items = {**document, "$ref": "#/components/schemas/CreateConversationItemsRequest"}
    jsonschema.Draft202012Validator(items).validate(body)
    url = f"{fuzzed_server.url}/v1/conversations"
    conversation = httpx.post(url, json={}, headers=_auth(url)).json()["id"]
    items = httpx.post(f"{url}/{conversation}/items", json={"items": body["items"][:3]}, headers=_auth(url))
    assert items.status_code == 200


def _nodes(value: Any) -> Iterator[dict[str, Any]]:
    """Every object in a JSON document."""
    if isinstance(value, dict):
        yield value
        for inner in value.values():
            yield from _nodes(inner)
    elif isinstance(value, list):
        for inner in value:
            yield from _nodes(inner)


@pytest.mark.timeout(900)
def test_every_answer_is_a_success_or_an_openai_error(fuzzed_server: LiveServer) -> None:
    schema = schemathesis.openapi.from_url(f"{fuzzed_server.url}/openapi.json")
    failures: list[str] = []
    operations = [found.ok() for found in schema.get_all_operations()]
    assert len(operations) >= 50

    for operation in operations:

        @given(case=operation.as_strategy())
        @settings(max_examples=EXAMPLES_PER_OPERATION, deadline=None, suppress_health_check=list(HealthCheck),
                  database=None)  # fmt: skip
        def one(case: Any) -> None:
            response = case.call(base_url=fuzzed_server.url, timeout=REQUEST_TIMEOUT_SECONDS,
                                 headers=_auth(case.path))  # fmt: skip
            where = f"{case.method} {case.formatted_path} {case.body!r:.300}"
            assert response.status_code < 500, f"{where}: {response.status_code} {response.text[:300]}"
            if response.status_code >= 400:
                error = response.json()["error"]
                assert set(error) >= {"message", "type", "param", "code"} and error["message"], where

        try:
            one()
        except Exception as failure:  # every operation is fuzzed; all failures are reported together
            failures.append(f"{operation.method.upper()} {operation.path}: {failure}")  # Unsatisfiable: no body fits
    assert not failures, "\n".join(failures)
