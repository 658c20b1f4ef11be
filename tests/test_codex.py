"""Codex CLI (``@openai/codex`` from the npm registry) end to end against a live ``responsa serve``:
a plain turn, a turn that runs a shell command through Codex's tool and uses its output, and
``codex exec resume --last``; on the simulator, an upstream and (the plain turn) the embedded model.

The binary comes from ``RESPONSA_CODEX``, ``node_modules/.bin/codex`` or ``PATH``; without it the
tests are skipped, unless ``RESPONSA_REQUIRE_CODEX`` is set (as CI, which installs it, does).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from responsa.backends.llama_cpp import DEFAULT_MODEL_NAME
from responsa.config import Settings
from tests.backends.mock_upstream import Stream, text_chunks
from tests.backends.test_chat_completions import Rig, start_rig
from tests.conftest import LiveServer, serve, sqlite_server

ROOT = Path(__file__).resolve().parent.parent


def codex_binary() -> str:
    found = os.environ.get("RESPONSA_CODEX") or shutil.which("codex", path=str(ROOT / "node_modules" / ".bin"))
    found = found or shutil.which("codex")
    if found is None:
        if os.environ.get("RESPONSA_REQUIRE_CODEX"):
            pytest.fail("Codex CLI is required (RESPONSA_REQUIRE_CODEX) but not installed")
        pytest.skip("Codex CLI not installed (npm install @openai/codex)")
    return found


SANDBOX = (
    # Codex wraps commands in bubblewrap where it is installed (install.sh installs it for the code
    # interpreter), with a helper it will not create under /tmp, where these tests keep its home:
    # the commands here (cat, echo) run as they are.
    'sandbox_mode = "danger-full-access"\n'
)


def custom_provider(base_url: str, name: str = "responsa") -> str:
    """Codex's configuration for responsa as a custom provider (HTTP and SSE, no retries)."""
    return (
        'model_provider = "responsa"\n'
        "[model_providers.responsa]\n"
        f'name = "{name}"\n'
        f'base_url = "{base_url}"\n'
        'wire_api = "responses"\n'
        'env_key = "RESPONSA_TEST_KEY"\n'
        "request_max_retries = 0\n"
        "stream_max_retries = 0\n"
    )


class Codex:
    """Runs ``codex exec`` with its own home, configured to use responsa: as a custom provider unless
    ``config`` (the provider part of ``config.toml``) says otherwise."""

    def __init__(self, home: Path, workdir: Path, base_url: str, model: str, config: str | None = None) -> None:
        self.binary = codex_binary()
        self.home, self.workdir = home, workdir
        home.mkdir(exist_ok=True)
        workdir.mkdir(exist_ok=True)
        (home / "config.toml").write_text(f'model = "{model}"\n' + SANDBOX + (config or custom_provider(base_url)))

    def exec(self, *args: str, check: bool = True) -> list[dict[str, Any]]:
        """Run ``codex exec --json ARGS``; its JSONL events (with ``check``, it must exit 0)."""
        env = {**os.environ, "CODEX_HOME": str(self.home), "RESPONSA_TEST_KEY": "unused", "OPENAI_API_KEY": "unused",
               "NO_COLOR": "1"}  # fmt: skip
        done = subprocess.run(
            [self.binary, "exec", *args[:-1], "--json", "--skip-git-repo-check", args[-1]],
            cwd=self.workdir,
            env=env,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=540,
        )
        assert done.returncode == 0 or not check, f"codex failed:\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
        return [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]


def items(events: list[dict[str, Any]], kind: str) -> list[dict[str, Any]]:
    return [e["item"] for e in events if e["type"] == "item.completed" and e["item"]["type"] == kind]


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveServer]:
    yield from sqlite_server(tmp_path_factory, "codex")


def test_plain_turn_on_the_simulator(server: LiveServer, tmp_path: Path) -> None:
    codex = Codex(tmp_path / "home", tmp_path / "work", server.v1, "sim")
    events = codex.exec("Say hello to the team")
    (message,) = items(events, "agent_message")
    assert message["text"]
    assert events[-1]["type"] == "turn.completed"


def test_shell_turn_and_resume_on_the_simulator(server: LiveServer, tmp_path: Path) -> None:
    codex = Codex(tmp_path / "home", tmp_path / "work", server.v1, "sim")
    (codex.workdir / "notes.txt").write_text("responsa-marker-41\n")
    events = codex.exec("Run the command `cat notes.txt` with exec_command and tell me what it printed")
    (command,) = items(events, "command_execution")
    assert "cat notes.txt" in command["command"]
    assert "responsa-marker-41" in command["aggregated_output"]
    (answer,) = items(events, "agent_message")
    assert "responsa-marker-41" in answer["text"]  # the model read the command's output

    resumed = codex.exec("resume", "--last", "Thanks, say goodbye to the team")
    assert items(resumed, "agent_message")
    assert resumed[0]["thread_id"] == events[0]["thread_id"]


@pytest.mark.timeout(600)
def test_plain_turn_on_the_embedded_model(tmp_path: Path) -> None:
    """Codex's tools alone are ~4,700 tokens and its instructions ~4,500 more: they fit the embedded
    model only in its full 8,192-token window and with the oldest items dropped, which Codex never
    asks for, hence ``--embedded-context 8192 --default-truncation auto`` (as docs/codex.md says).

    Reading that prompt takes the 135M model ~30 s on two cores, much longer on a busy machine: this
    test gets a longer timeout than the suite's default. Sampled at temperature 1 (Codex sends none),
    the model sometimes rambles until its window is full; the response is then ``incomplete``, which
    Codex reports as a failed turn. That is the model, not the protocol: it is the one failure allowed."""
    settings = Settings(
        db_url=f"sqlite:///{tmp_path / 'e.db'}", default_truncation="auto", embedded_context=8192, simulator=False
    )
    with serve(settings) as live:
        codex = Codex(tmp_path / "home", tmp_path / "work", live.v1, DEFAULT_MODEL_NAME)
        events = codex.exec("Say hi", check=False)
    if events[-1]["type"] == "turn.failed":
        assert events[-1]["error"]["message"] == "Incomplete response returned, reason: max_output_tokens"
        return
    assert events[-1]["type"] == "turn.completed"
    assert len(items(events, "agent_message")) == 1


@pytest.fixture
def rig(tmp_path: Path) -> Iterator[Rig]:
    yield from start_rig(tmp_path)


def call_chunks(name: str, arguments: dict[str, Any]) -> list[dict[str, Any]]:
    """An upstream's streamed chunks of one call of ``name`` with ``arguments``."""
    entry = {
        "index": 0,
        "id": "call_1",
        "type": "function",
        "function": {"name": name, "arguments": json.dumps(arguments)},
    }
    return [{"choices": [{"index": 0, "delta": {"tool_calls": [entry]}}]},
            {"choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}]}]  # fmt: skip


def test_shell_turn_and_resume_on_an_upstream(rig: Rig, tmp_path: Path) -> None:
    codex = Codex(tmp_path / "home", tmp_path / "work", rig.server.v1, "up-model")
    rig.first.script.extend([Stream(call_chunks("exec_command", {"cmd": "echo upstream-marker"})),
                             Stream(text_chunks("It printed upstream-marker.")),
                             Stream(text_chunks("Goodbye."))])  # fmt: skip
    events = codex.exec("Echo a marker")
    (command,) = items(events, "command_execution")
    assert "upstream-marker" in command["aggregated_output"]
    assert [m["text"] for m in items(events, "agent_message")] == ["It printed upstream-marker."]
    second = rig.first.requests[1]["messages"]
    assert second[-1]["role"] == "tool" and "upstream-marker" in second[-1]["content"]
    offered = {tool["function"]["name"] for tool in rig.first.requests[0]["tools"]}
    assert "exec_command" in offered and "web_search" not in offered

    resumed = codex.exec("resume", "--last", "Bye")
    assert [m["text"] for m in items(resumed, "agent_message")] == ["Goodbye."]
    assert any("upstream-marker" in str(m.get("content")) for m in rig.first.requests[2]["messages"])
