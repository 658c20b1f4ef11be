"""Schema-based fuzzing of every route the server documents at ``/openapi.json`` (schemathesis,
bounded examples per operation): every answer is a success or an OpenAI-shaped error, never a 5xx,
never a hang. Defects it found are kept as regression tests next to the code they concern (e.g.
tests/http/test_errors.py::test_a_type_that_is_not_a_string_is_a_400)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import httpx
import pytest
import schemathesis
from hypothesis import HealthCheck, given, settings
from hypothesis.errors import Unsatisfiable

from responsa.config import Settings
from tests.conftest import LiveServer, serve

EXAMPLES_PER_OPERATION = 40
REQUEST_TIMEOUT_SECONDS = 15
GENERATION_ATTEMPTS = 3
"""Hypothesis sometimes generates no case at all for an operation with a deep body (the items of
``POST /v1/conversations/{id}/items``: once 459 candidates in a row failed schemathesis's filters);
that says nothing of the server, so the operation is fuzzed again, with fresh random cases."""


@pytest.fixture(scope="module")
def fuzzed_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveServer]:
    db = tmp_path_factory.mktemp("fuzz") / "fuzz.db"
    with serve(Settings(db_url=f"sqlite:///{db}", embedded=False)) as live:
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
            response = case.call(base_url=fuzzed_server.url, timeout=REQUEST_TIMEOUT_SECONDS)
            where = f"{case.method} {case.formatted_path} {case.body!r:.300}"
            assert response.status_code < 500, f"{where}: {response.status_code} {response.text[:300]}"
            if response.status_code >= 400:
                error = response.json()["error"]
                assert set(error) >= {"message", "type", "param", "code"} and error["message"], where

        for attempt in range(GENERATION_ATTEMPTS):
            try:
                one()
            except Unsatisfiable as failure:  # no case generated this time (not the server's doing): again
                if attempt + 1 == GENERATION_ATTEMPTS:
                    failures.append(f"{operation.method.upper()} {operation.path}: {failure}")
                continue
            except Exception as failure:  # every operation is fuzzed; all failures are reported together
                failures.append(f"{operation.method.upper()} {operation.path}: {failure}")
            break
    assert not failures, "\n".join(failures)
