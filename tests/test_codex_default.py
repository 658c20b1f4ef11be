"""Codex CLI in the setups people actually use, against a live ``responsa serve`` on the simulator:

- the built-in ``openai`` provider with ``openai_base_url`` (what most guides say): WebSocket mode,
  starting each thread with a ``generate: false`` prewarm, and remote compaction v2;
- a custom provider named "OpenAI" over HTTP, which compacts remotely too, reading the model catalog
  from ``model_catalog_url``;
- the built-in provider against ``responsa serve --workers 2`` on PostgreSQL (no ``--secret-key``): its
  connections (the WebSocket of each run, the catalog, the compaction) land on either worker.

Codex reports a WebSocket it could not use as an ``error`` item ("Falling back from WebSockets to
HTTPS transport") and a model it has no metadata for as another ("Model metadata for … not found"):
the tests require that neither appears. Compaction is read from Codex's own session file, where it
records the history it replaced with the server's ``compaction`` item.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from responsa.config import Settings
from tests.backends.mock_upstream import Stream, text_chunks
from tests.backends.test_chat_completions import Rig, start_rig
from tests.conftest import LiveServer, sqlite_server, start_serve
from tests.test_codex import Codex, call_chunks, custom_provider, items

COMPACT_AT = 3000
"""``model_auto_compact_token_limit`` for the turn that must compact: Codex's instructions and tools
alone are about 5,600 tokens with the catalog's instructions, so a resumed session is over it at once."""


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveServer]:
    yield from sqlite_server(tmp_path_factory, "codex-default")


@pytest.fixture(scope="module")
def workers(tmp_path_factory: pytest.TempPathFactory, postgres_url: str) -> Iterator[LiveServer]:
    directory = tmp_path_factory.mktemp("codex-workers")
    process, url = start_serve("--workers", "2", "--no-embedded", "--db", postgres_url, log=directory / "serve.log")
    yield LiveServer(url, Settings())
    process.terminate()
    process.wait(30)


@pytest.fixture
def rig(tmp_path: Path) -> Iterator[Rig]:
    yield from start_rig(tmp_path)


def default_provider(server: LiveServer, home: Path) -> str:
    """The built-in provider pointed at responsa, with the catalog saved where ``model_catalog_json`` reads
    it (the built-in provider takes a catalog URL only on OpenAI's hosts)."""
    home.mkdir(exist_ok=True)
    catalog = httpx.get(f"{server.v1}/models", params={"client_version": "0.169.0"}, timeout=10)
    assert catalog.status_code == 200 and catalog.headers["x-models-etag"] == catalog.headers["etag"]
    (home / "models.json").write_text(catalog.text)
    return f'openai_base_url = "{server.v1}"\nmodel_catalog_json = "{home / "models.json"}"\n'


def errors(events: list[dict[str, Any]]) -> list[str]:
    return [item["message"] for item in items(events, "error")] + [e["message"] for e in events if e["type"] == "error"]


def compactions(home: Path) -> list[dict[str, Any]]:
    """The compaction items Codex put in place of its history, from its session files."""
    found = []
    for session in home.glob("sessions/**/*.jsonl"):
        for line in session.read_text().splitlines():
            record = json.loads(line)
            if record.get("type") == "compacted":
                history = record["payload"].get("replacement_history") or []
                found += [item for item in history if item.get("type") == "compaction"]
    return found


def shell_then_compacting_resume(codex: Codex) -> list[dict[str, Any]]:
    """A shell tool loop, then a resumed turn over the compaction limit: the events of both."""
    (codex.workdir / "notes.txt").write_text("responsa-marker-41\n")
    events = codex.exec("Run the command `cat notes.txt` with exec_command and tell me what it printed")
    (command,) = items(events, "command_execution")
    assert "responsa-marker-41" in command["aggregated_output"]
    (answer,) = items(events, "agent_message")
    assert "responsa-marker-41" in answer["text"]
    assert compactions(codex.home) == []

    resumed = codex.exec("-c", f"model_auto_compact_token_limit={COMPACT_AT}", "resume", "--last",
                         "Thanks, say goodbye to the team")  # fmt: skip
    assert resumed[0]["thread_id"] == events[0]["thread_id"] and resumed[-1]["type"] == "turn.completed"
    assert items(resumed, "agent_message")
    (compaction,) = compactions(codex.home)
    assert compaction["encrypted_content"].startswith("rsa1.")  # the server's sealed item, not Codex's own
    return events + resumed


def test_the_default_provider_talks_websocket_with_the_catalog(server: LiveServer, tmp_path: Path) -> None:
    home = tmp_path / "home"
    codex = Codex(home, tmp_path / "work", server.v1, "sim", config=default_provider(server, home))
    events = codex.exec("Say hello to the team")
    assert errors(events) == []  # no fallback to HTTPS, no missing metadata
    (message,) = items(events, "agent_message")
    assert message["text"] and events[-1]["type"] == "turn.completed"


def test_the_default_provider_runs_a_shell_loop_resumes_and_compacts_remotely(
    server: LiveServer, tmp_path: Path
) -> None:
    home = tmp_path / "home"
    codex = Codex(home, tmp_path / "work", server.v1, "sim", config=default_provider(server, home))
    assert errors(shell_then_compacting_resume(codex)) == []


def test_the_default_provider_works_through_two_workers(workers: LiveServer, tmp_path: Path) -> None:
    home = tmp_path / "home"
    codex = Codex(home, tmp_path / "work", workers.v1, "sim", config=default_provider(workers, home))
    assert errors(shell_then_compacting_resume(codex)) == []
    assert errors(codex.exec("resume", "--last", "What did the command print?")) == []


def test_a_custom_provider_named_openai_compacts_over_http_and_reads_the_catalog(
    server: LiveServer, tmp_path: Path
) -> None:
    catalog = f'model_catalog_url = "{server.v1}/models"\n[features]\napi_key_model_discovery = true\n'
    config = custom_provider(server.v1, name="OpenAI") + catalog
    codex = Codex(tmp_path / "home", tmp_path / "work", server.v1, "sim", config=config)
    assert errors(shell_then_compacting_resume(codex)) == []


def upstream_shell_loop(rig: Rig, tmp_path: Path, config: Callable[[LiveServer, Path], str], call: str) -> None:
    """Codex, configured by ``config``, runs one command the upstream model asks for with ``call``
    (its tool name as the model is offered it) and says what it printed."""
    home = tmp_path / "home"
    codex = Codex(home, tmp_path / "work", rig.server.v1, "up-model", config=config(rig.server, home))
    rig.first.script.extend([Stream(call_chunks(call, {"cmd": "echo upstream-marker"})),
                             Stream(text_chunks("It printed upstream-marker."))])  # fmt: skip
    events = codex.exec("Echo a marker")
    assert errors(events) == []
    (command,) = items(events, "command_execution")
    assert "upstream-marker" in command["aggregated_output"]
    assert [m["text"] for m in items(events, "agent_message")] == ["It printed upstream-marker."]
    assert "upstream-marker" in str(rig.first.requests[-1]["messages"][-1]["content"])


def test_the_default_provider_runs_an_upstream_model_over_websocket(rig: Rig, tmp_path: Path) -> None:
    upstream_shell_loop(rig, tmp_path, default_provider, "exec_command")
    assert len(rig.first.requests) == 2  # two model calls for one tool loop: the prewarm reached no model


def lite_provider(server: LiveServer, home: Path) -> str:
    """The built-in provider, with a catalog that says ``use_responses_lite`` (``--codex-responses-lite``)."""
    config = default_provider(server, home)
    catalog = json.loads((home / "models.json").read_text())["models"]
    assert catalog and all(entry["use_responses_lite"] for entry in catalog)
    return config


def test_codex_in_responses_lite_runs_a_shell_loop_on_an_upstream(tmp_path: Path) -> None:
    """Lite: no top-level tools, Codex's tools in an ``additional_tools`` item (its ``functions``
    namespace), ``reasoning.context: all_turns``. The upstream model is offered them and calls one."""
    for rig in start_rig(tmp_path, codex_responses_lite=True):
        upstream_shell_loop(rig, tmp_path, lite_provider, "functions__exec_command")
        offered = [tool["function"]["name"] for tool in rig.first.requests[0]["tools"]]
        assert "functions__exec_command" in offered  # from the additional_tools item: Lite sends no tools


def test_codex_in_responses_lite_runs_a_shell_loop_on_the_simulator(
    tmp_path: Path, tmp_path_factory: pytest.TempPathFactory
) -> None:
    for server in sqlite_server(tmp_path_factory, "codex-lite", codex_responses_lite=True):
        home = tmp_path / "home"
        codex = Codex(home, tmp_path / "work", server.v1, "sim", config=lite_provider(server, home))
        (codex.workdir / "notes.txt").write_text("responsa-marker-43\n")
        events = codex.exec("Run the command `cat notes.txt` with exec_command and tell me what it printed")
        assert errors(events) == []
        (command,) = items(events, "command_execution")
        assert "responsa-marker-43" in command["aggregated_output"]
        (answer,) = items(events, "agent_message")
        assert "responsa-marker-43" in answer["text"]


def test_a_custom_provider_with_the_remote_compaction_capability_compacts_on_the_server(
    server: LiveServer, tmp_path: Path
) -> None:
    """Codex 0.162 and later: any provider name, with ``capabilities.remote_compaction = "v2"``."""
    catalog = f'model_catalog_url = "{server.v1}/models"\n'
    capability = '[model_providers.responsa.capabilities]\nremote_compaction = "v2"\n'
    features = "[features]\napi_key_model_discovery = true\n"
    config = custom_provider(server.v1, name="responsa") + catalog + capability + features
    codex = Codex(tmp_path / "home", tmp_path / "work", server.v1, "sim", config=config)
    assert errors(shell_then_compacting_resume(codex)) == []
