"""``GET /v1/models``: OpenAI's list through the openai SDK, and with ``client_version`` the catalog Codex
reads, each entry from what the backend serving the model knows of it."""

from __future__ import annotations

import httpx
import openai
import pytest

from responsa.backends.llama_cpp import DEFAULT_MODEL_NAME
from responsa.config import Settings
from tests.conftest import LiveServer
from tests.in_process import in_process

CODEX_FIELDS = {"slug", "display_name", "base_instructions", "supported_reasoning_levels", "shell_type",
                "visibility", "supported_in_api", "priority", "supports_reasoning_summaries", "support_verbosity",
                "apply_patch_tool_type", "truncation_policy", "supports_parallel_tool_calls", "context_window",
                "experimental_supported_tools", "input_modalities"}  # fmt: skip


def test_a_plain_client_gets_openais_list(client: openai.OpenAI) -> None:
    models = client.models.list().data
    names = [model.id for model in models]
    assert DEFAULT_MODEL_NAME in names and "sim" in names
    assert all(model.object == "model" and model.owned_by == "responsa" for model in models)


def test_codex_gets_its_catalog_from_the_backends(server: LiveServer) -> None:
    reply = httpx.get(f"{server.v1}/models", params={"client_version": "0.169.0"})
    assert reply.status_code == 200 and set(reply.json()) == {"models"}
    entries = {entry["slug"]: entry for entry in reply.json()["models"]}
    assert all(CODEX_FIELDS <= set(entry) for entry in entries.values())
    assert all(entry["apply_patch_tool_type"] == "freeform" for entry in entries.values())
    assert [entry["priority"] for entry in entries.values()] == list(range(1, len(entries) + 1))

    embedded = entries[DEFAULT_MODEL_NAME]
    assert embedded["context_window"] == server.settings.embedded_context  # the GGUF's context as served
    assert embedded["truncation_policy"] == {"mode": "tokens", "limit": server.settings.embedded_context // 4}
    assert embedded["input_modalities"] == ["text"]  # no projector: Codex keeps images back
    assert embedded["supported_reasoning_levels"] == [] and embedded["default_reasoning_level"] is None

    reasoning = entries["gpt-5-mini"]  # a simulated reasoning profile
    efforts = [level["effort"] for level in reasoning["supported_reasoning_levels"]]
    assert "minimal" in efforts and "high" in efforts and reasoning["default_reasoning_level"] in efforts
    assert reasoning["input_modalities"] == ["text", "image"] and reasoning["supports_reasoning_summaries"]
    assert reasoning["supports_reasoning_effort_updates"] and not embedded["supports_reasoning_effort_updates"]
    assert entries["sim"]["truncation_policy"] == {"mode": "tokens", "limit": 10_000}  # no window known


def test_the_catalog_has_an_etag_and_answers_304_when_unchanged(server: LiveServer) -> None:
    first = httpx.get(f"{server.v1}/models", params={"client_version": "0.169.0"})
    etag = first.headers["etag"]
    assert first.headers["x-models-etag"] == etag
    again = httpx.get(f"{server.v1}/models?client_version=0.169.0", headers={"If-None-Match": etag})
    assert again.status_code == 304 and again.content == b""
    stale = httpx.get(f"{server.v1}/models?client_version=0.169.0", headers={"If-None-Match": '"old"'})
    assert stale.status_code == 200 and stale.json() == first.json()


def test_one_model_is_retrieved_by_name_and_an_unknown_one_is_a_404(client: openai.OpenAI) -> None:
    model = client.models.retrieve("sim")
    assert (model.id, model.object, model.owned_by) == ("sim", "model", "responsa")
    with pytest.raises(openai.NotFoundError) as caught:
        client.models.retrieve("no-such-model")
    assert caught.value.code == "model_not_found" and caught.value.param == "model"


def test_the_catalog_says_responses_lite_where_the_setting_asks(tmp_path_factory: pytest.TempPathFactory) -> None:
    db = tmp_path_factory.mktemp("lite") / "r.db"
    with in_process(Settings(db_url=f"sqlite:///{db}", codex_responses_lite=True, embedded=False)) as app:
        catalog = app.http.get("/v1/models", params={"client_version": "0.171.0"}).json()["models"]
    assert catalog and all(entry["use_responses_lite"] is True for entry in catalog)
