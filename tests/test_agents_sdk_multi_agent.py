"""The Agents SDK's ``OpenAIHostedMultiAgentModel`` (openai-agents' hosted multi-agent beta) against a
live server on the simulator: the root delegates to subagents that run on the server side by side,
a subagent and the root call the client's function tool and the SDK answers with ``response.inject``
without the response ending, and the final answer is the root's."""

from __future__ import annotations

import asyncio
import os
from collections.abc import Iterator
from typing import Any

import pytest

os.environ.setdefault("OPENAI_AGENTS_DISABLE_TRACING", "1")  # its traces would go to api.openai.com (before import)
import agents
from agents.extensions.experimental.hosted_multi_agent import OpenAIHostedMultiAgentModel
from openai import AsyncOpenAI

from tests.conftest import LiveServer, sqlite_server


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveServer]:
    yield from sqlite_server(tmp_path_factory, "agents-multi-agent")


def _run(server: LiveServer, prompt: str, cities: list[str], concurrency: int | None = None) -> Any:
    agents.set_tracing_disabled(True)

    @agents.function_tool
    def get_weather(city: str) -> str:
        """The weather in a city now."""
        cities.append(city)
        return f"Sunny and 21 degrees in {city}."

    async def run() -> Any:
        client = AsyncOpenAI(base_url=server.v1, api_key="-", max_retries=0)
        config = {"max_concurrent_subagents": concurrency} if concurrency else None
        model = OpenAIHostedMultiAgentModel("sim", client, config=config)
        agent = agents.Agent(name="lead", instructions="Delegate when asked to.", tools=[get_weather], model=model)
        try:
            return await agents.Runner.run(agent, prompt, max_turns=8)
        finally:
            await model.close()
            await client.close()

    return asyncio.run(run())


def test_the_root_delegates_to_subagents_and_answers_with_their_results(server: LiveServer) -> None:
    result = _run(server, "Delegate to helpers: Reply with: alpha; Reply with: beta; Reply with: gamma", [], 2)
    assert result.final_output == "Subagents reported. task_1: alpha; task_2: beta; task_3: gamma"
    (response,) = result.raw_responses
    assert response.usage is not None and response.usage.total_tokens > 0


def test_a_subagents_client_call_is_answered_by_inject_while_the_response_runs(server: LiveServer) -> None:
    cities: list[str] = []
    result = _run(server, "Delegate to a helper: What is the weather in Paris? Use get_weather.", cities)
    assert cities == ["Paris"]  # the SDK ran the subagent's call, and injected its output
    assert "task_1: " in result.final_output and "Sunny and 21 degrees in Paris" in result.final_output
    calls = [item for item in result.new_items if item.type == "tool_call_item"]
    assert len(calls) == 1 and calls[0].raw_item.agent["agent_name"] == "/root/task_1"  # type: ignore[union-attr]
    # one response: the SDK paused at the call and went on in the same response after its inject
    assert len({response.response_id for response in result.raw_responses}) == 1


def test_the_roots_own_client_call_does_not_end_the_response(server: LiveServer) -> None:
    cities: list[str] = []
    result = _run(server, "What is the weather in Lisbon? Use get_weather.", cities)
    assert cities == ["Lisbon"]
    assert "Sunny and 21 degrees in Lisbon" in result.final_output
    assert len({response.response_id for response in result.raw_responses}) == 1


def test_a_subagent_spawns_its_own_within_one_place_at_once(server: LiveServer) -> None:
    """A tree of two levels with one subagent at a time: the middle one, waiting for its own, gives up
    its place meanwhile (else each would wait for the other)."""
    result = _run(server, "Delegate to a helper: Delegate to a minion: Reply with: deep", [], 1)
    assert result.final_output == "Subagents reported. task_1: Subagents reported. task_1: deep"
