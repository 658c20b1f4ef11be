"""The OpenAI Agents SDK against a live server: an agent whose model is served in-process from a GGUF
(under a template that knows tools) calls a Python function tool in the model's own format, the SDK
runs it and sends the result back, and the agent finishes."""

from __future__ import annotations

import asyncio
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

os.environ.setdefault("OPENAI_AGENTS_DISABLE_TRACING", "1")  # its traces would go to api.openai.com (before import)
import agents

from responsa.backends.llama_cpp import default_gguf
from responsa.config import EmbeddedModelConfig, Settings
from tests.conftest import serve

TEMPLATE = Path(__file__).parent / "backends" / "templates" / "hermes.jinja"


@pytest.fixture(scope="module")
def base_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    model = EmbeddedModelConfig(source="local", name="local-hermes", path=default_gguf(), chat_template=TEMPLATE)
    db = f"sqlite:///{tmp_path_factory.mktemp('agents')}/db.sqlite"
    with serve(Settings(db_url=db, simulator=False, embedded=False, embedded_models=(model,))) as server:
        yield server.v1


def test_an_agent_calls_its_function_tool_on_a_local_model(base_url: str) -> None:
    from openai import AsyncOpenAI

    agents.set_tracing_disabled(True)
    cities: list[str] = []

    @agents.function_tool
    def get_weather(city: str) -> str:
        """The weather in a city now."""
        cities.append(city)
        return "Sunny and 21 degrees."

    async def run() -> Any:
        async with AsyncOpenAI(base_url=base_url, api_key="-") as client:
            agent = agents.Agent(
                name="forecaster",
                instructions="Answer questions about the weather with the get_weather tool.",
                tools=[get_weather],
                model=agents.OpenAIResponsesModel(model="local-hermes", openai_client=client),
                model_settings=agents.ModelSettings(tool_choice="required", temperature=0, max_tokens=60),
            )
            return await agents.Runner.run(agent, "What's the weather in Paris?", max_turns=4)

    result = asyncio.run(run())
    assert len(cities) >= 1 and all(isinstance(city, str) and city for city in cities)
    # The SDK sends each result back (tool_choice goes back to auto after a call) and the model answers.
    assert isinstance(result.final_output, str) and result.final_output.strip()
    calls = [item for item in result.new_items if item.type == "tool_call_item"]
    outputs = [item for item in result.new_items if item.type == "tool_call_output_item"]
    assert len(calls) == len(outputs) == len(cities)
    assert all(output.output == "Sunny and 21 degrees." for output in outputs)
