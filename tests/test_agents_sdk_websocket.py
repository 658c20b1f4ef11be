"""The OpenAI Agents SDK's WebSocket session and its compaction session against a live server on the
simulator: a function-tool loop over one shared socket, a streamed continuation of it, and a session
whose history the server compacts (``/responses/compact``) between runs."""

from __future__ import annotations

import asyncio
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

os.environ.setdefault("OPENAI_AGENTS_DISABLE_TRACING", "1")  # its traces would go to api.openai.com (before import)
import agents
from agents.memory import OpenAIResponsesCompactionSession
from openai import AsyncOpenAI

from tests.conftest import LiveServer, sqlite_server


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveServer]:
    yield from sqlite_server(tmp_path_factory, "agents-websocket")


def forecaster(cities: list[str]) -> agents.Agent[Any]:
    @agents.function_tool
    def get_weather(city: str) -> str:
        """The weather in a city now."""
        cities.append(city)
        return "Sunny and 21 degrees."

    return agents.Agent(name="forecaster", instructions="Answer weather questions with get_weather.",
                        tools=[get_weather], model="sim")  # fmt: skip


def test_a_websocket_session_runs_a_tool_loop_and_a_streamed_continuation(server: LiveServer) -> None:
    agents.set_tracing_disabled(True)
    cities: list[str] = []

    async def run() -> tuple[Any, list[str], Any]:
        async with agents.responses_websocket_session(api_key="-", base_url=server.v1) as session:
            agent = forecaster(cities)
            first = await session.run(agent, "What's the weather in Paris?", max_turns=4)
            streamed = session.run_streamed(agent, "Thanks! And tomorrow, in one sentence?",
                                            previous_response_id=first.last_response_id)  # fmt: skip
            kinds = [event.type async for event in streamed.stream_events()]
            return first, kinds, streamed

    first, kinds, streamed = asyncio.run(run())
    assert cities and all(cities)
    calls = [item for item in first.new_items if item.type == "tool_call_item"]
    outputs = [item for item in first.new_items if item.type == "tool_call_output_item"]
    assert len(calls) == len(outputs) == len(cities)
    assert "Sunny and 21 degrees" in first.final_output  # the simulator answered from the tool's output
    assert "raw_response_event" in kinds and isinstance(streamed.final_output, str) and streamed.final_output
    assert streamed.last_response_id and streamed.last_response_id != first.last_response_id


def test_a_compaction_session_compacts_on_the_server_and_goes_on(server: LiveServer, tmp_path: Path) -> None:
    agents.set_tracing_disabled(True)

    async def run() -> tuple[list[Any], Any]:
        client = AsyncOpenAI(base_url=server.v1, api_key="-", max_retries=0)
        model = agents.OpenAIResponsesModel(model="gpt-4.1", openai_client=client)
        agent = agents.Agent(name="planner", instructions="Keep track of the plan.", model=model)
        history = agents.SQLiteSession("plan", str(tmp_path / "history.db"))
        session = OpenAIResponsesCompactionSession("plan", history, client=client, model="gpt-4.1",
                                                   should_trigger_compaction=lambda context: True)  # fmt: skip
        await agents.Runner.run(agent, "We launch on Tuesday with a budget of 4,000 euros.", session=session)
        last = await agents.Runner.run(agent, "Remind me of the launch day.", session=session)
        kept = await session.get_items()
        await client.close()
        return kept, last

    kept, last = asyncio.run(run())
    kinds = [item.get("type") for item in kept]
    assert kinds.count("compaction") == 1 and kinds[-1] == "compaction"
    assert str(kept[-1]["encrypted_content"]).startswith("rsa1.")
    assert isinstance(last.final_output, str) and last.final_output
