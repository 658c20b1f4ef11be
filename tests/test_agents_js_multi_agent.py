"""The JS Agents SDK's ``OpenAIHostedMultiAgentModel`` (``@openai/agents`` from the npm registry, its
experimental hosted multi-agent) against a live server on the simulator, as
tests/test_agents_sdk_multi_agent.py runs the Python one: the root delegates to subagents, a
subagent's and the root's client calls are answered by ``response.inject`` in the one response.

The SDK comes from the ``node_modules`` folder ``RESPONSA_AGENTS_JS`` names (or the checkout's); without
it the tests are skipped, unless ``RESPONSA_REQUIRE_AGENTS_JS`` is set (as CI, which installs it, does).
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

from tests.conftest import LiveServer, sqlite_server

ROOT = Path(__file__).resolve().parent.parent
CLIENT = Path(__file__).with_name("agents_js_multi_agent.cjs")


def _node_modules() -> Path:
    found = Path(os.environ.get("RESPONSA_AGENTS_JS") or ROOT / "node_modules")
    if shutil.which("node") is None or not (found / "@openai" / "agents").is_dir():
        if os.environ.get("RESPONSA_REQUIRE_AGENTS_JS"):
            pytest.fail(f"the JS Agents SDK is required (RESPONSA_REQUIRE_AGENTS_JS) but not in {found}")
        pytest.skip("the JS Agents SDK is not installed (npm install @openai/agents zod)")
    return found


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveServer]:
    yield from sqlite_server(tmp_path_factory, "agents-js-multi-agent")


def _run(server: LiveServer, prompt: str, concurrency: int = 2) -> Any:
    environment = {"PATH": os.environ["PATH"], "NODE_PATH": str(_node_modules())}
    ran = subprocess.run(["node", str(CLIENT), server.v1, str(concurrency), prompt],
                         capture_output=True, text=True, timeout=120, env=environment)  # fmt: skip
    assert ran.returncode == 0, ran.stderr
    return json.loads(ran.stdout.splitlines()[-1])


def test_the_root_delegates_to_subagents_and_answers_with_their_results(server: LiveServer) -> None:
    result = _run(server, "Delegate to helpers: Reply with: alpha; Reply with: beta; Reply with: gamma")
    assert result["final"] == "Subagents reported. task_1: alpha; task_2: beta; task_3: gamma"
    assert len(set(result["responses"])) == 1 and result["agents"][-1] == "/root"


def test_a_subagents_client_call_is_answered_by_inject_while_the_response_runs(server: LiveServer) -> None:
    result = _run(server, "Delegate to a helper: What is the weather in Paris? Use get_weather.")
    assert result["cities"] == ["Paris"]  # the SDK ran the subagent's call, and injected its output
    assert "task_1: " in result["final"] and "Sunny and 21 degrees in Paris" in result["final"]
    assert result["agents"][0] == "/root/task_1"  # the call, as the SDK shows it
    assert len(set(result["responses"])) == 1  # the SDK went on in the same response after its inject


def test_the_roots_own_client_call_does_not_end_the_response(server: LiveServer) -> None:
    result = _run(server, "What is the weather in Lisbon? Use get_weather.", concurrency=1)
    assert result["cities"] == ["Lisbon"] and "Sunny and 21 degrees in Lisbon" in result["final"]
    assert len(set(result["responses"])) == 1
