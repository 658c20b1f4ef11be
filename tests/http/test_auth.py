"""With API keys configured, every route but /health needs ``Authorization: Bearer <key>``."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import httpx
import openai
import pytest

from responsa.config import Settings
from tests.conftest import LiveServer, serve


@pytest.fixture(scope="module")
def locked(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveServer]:
    db = tmp_path_factory.mktemp("auth") / "responsa.db"
    with serve(Settings(db_url=f"sqlite:///{db}", api_keys=("key-one", "key-two"))) as live:
        yield live


def test_missing_and_wrong_keys_are_401(locked: LiveServer) -> None:
    for headers in ({}, {"authorization": "Bearer nope"}, {"authorization": "Basic key-one"}):
        reply = httpx.post(f"{locked.v1}/responses", json={"model": "sim", "input": "hi"}, headers=headers)
        assert reply.status_code == 401
        error = reply.json()["error"]
        assert (error["type"], error["code"]) == ("authentication_error", "invalid_api_key")
    with pytest.raises(openai.AuthenticationError):
        with openai.OpenAI(base_url=locked.v1, api_key="wrong", max_retries=0) as sdk:
            sdk.models.list()


def test_configured_keys_work_and_health_is_open(locked: LiveServer, tmp_path: Path) -> None:
    for key in ("key-one", "key-two"):
        with openai.OpenAI(base_url=locked.v1, api_key=key, max_retries=0) as sdk:
            assert sdk.responses.create(model="sim", input="Reply with: in").output_text == "in"
    assert httpx.get(f"{locked.url}/health").status_code == 200
