"""Tool search run by the server: tools marked ``defer_loading`` wait until the model searches for them;
the server answers its ``tool_search_call`` with a ``tool_search_output`` that loads the best matches,
offered from the model's next call on and on later turns. A scripted model makes the searches and
calls (in process); the Agents SDK's ToolSearchTool runs against a live server."""

from __future__ import annotations

import asyncio
import json
import os
from typing import Any

import openai
import pytest

from responsa.config import Settings
from tests.backends.mock_upstream import MockUpstream, Stream, call_turn, text_chunks
from tests.conftest import LiveServer, serve_app
from tests.engine.tools.mcp_server import streamable_app
from tests.in_process import InProcess, in_process
from tests.scripted import ScriptedBackend, call, text

SEARCH = {"type": "tool_search"}


def _function(name: str, description: str, *properties: str, deferred: bool = True) -> dict[str, Any]:
    schema = {"type": "object", "properties": {key: {"type": "string"} for key in properties}}
    return {"type": "function", "name": name, "description": description, "parameters": schema,
            **({"defer_loading": True} if deferred else {})}  # fmt: skip


TOOLS = [
    SEARCH,
    _function("get_weather", "The weather forecast in a city today.", "city"),
    _function("send_email", "Send an email message to a recipient.", "to", "body"),
    _function("add_numbers", "Add two numbers and return the sum.", "a", "b", deferred=False),
    {"type": "namespace", "name": "crm", "description": "The customer database.", "defer_loading": True,
     "tools": [_function("find_customer", "Look up a customer by name.", "name", deferred=False),
               _function("delete_customer", "Delete a customer record.", "name", deferred=False)]},
]  # fmt: skip


def _offered(model: ScriptedBackend, turn: int = -1) -> list[str]:
    return [tool.name for tool in model.requests[turn].tools]


def test_deferred_tools_wait_until_a_search_loads_them(scripted_module: tuple[InProcess, ScriptedBackend]) -> None:
    served, model = scripted_module
    model.turns += [call("tool_search", json.dumps({"query": "weather forecast for a city"})),
                    call("get_weather", json.dumps({"city": "Paris"}), call_id="call_weather")]  # fmt: skip
    reply = served.sdk.responses.create(model="scripted", input="Weather in Paris?", tools=TOOLS)  # type: ignore[arg-type]
    assert _offered(model, -2) == ["tool_search", "add_numbers"]  # the deferred ones held back
    assert "get_weather" in _offered(model) and "send_email" not in _offered(model)
    assert [item.type for item in reply.output] == ["tool_search_call", "tool_search_output", "function_call"]
    search, output, weather = reply.output
    assert search.execution == "server" and search.status == "completed"  # type: ignore[union-attr]
    assert search.arguments == {"query": "weather forecast for a city"}  # type: ignore[union-attr]
    assert output.execution == "server" and output.call_id == search.call_id and output.status == "completed"  # type: ignore[union-attr]
    names = [tool.name for tool in output.tools]  # type: ignore[union-attr]
    assert names[0] == "get_weather" and "send_email" not in names
    first = output.tools[0].model_dump()  # type: ignore[union-attr]
    assert first["type"] == "function" and first["description"] == "The weather forecast in a city today."
    assert not first.get("defer_loading")
    assert weather.type == "function_call" and weather.name == "get_weather"
    assert weather.namespace == "get_weather"  # a deferred top-level function, as OpenAI names its calls
    assert "get_weather" in str(model.requests[-1].items)  # the model read what the search found
    # A later turn of the chain offers what was loaded, and still holds back the rest.
    model.turns.append(text("Sunny."))
    after = served.sdk.responses.create(model="scripted", previous_response_id=reply.id, tools=TOOLS,  # type: ignore[arg-type]
                                        input=[{"type": "function_call_output", "call_id": "call_weather",
                                                "output": "sunny"}])  # fmt: skip
    assert after.output_text == "Sunny."
    assert "get_weather" in _offered(model) and "send_email" not in _offered(model)
    assert "crm__find_customer" not in _offered(model)


def test_a_namespaces_tools_load_under_their_namespace(scripted_module: tuple[InProcess, ScriptedBackend]) -> None:
    served, model = scripted_module
    model.turns += [call("tool_search", json.dumps({"query": "find a customer by name"})), text("Found them.")]
    reply = served.sdk.responses.create(model="scripted", input="Who is Ada?", tools=TOOLS)  # type: ignore[arg-type]
    output = reply.output[1]
    namespaces = [tool for tool in output.tools if tool.type == "namespace"]  # type: ignore[union-attr]
    assert [tool.name for tool in namespaces] == ["crm"]
    assert "find_customer" in [tool.name for tool in namespaces[0].tools]  # type: ignore[union-attr]
    assert "crm__find_customer" in _offered(model)


def test_a_search_that_matches_nothing_loads_nothing_and_says_so(
    scripted_module: tuple[InProcess, ScriptedBackend],
) -> None:
    served, model = scripted_module
    model.turns += [call("tool_search", json.dumps({"query": "zebra xylophone"})), text("Nothing.")]
    reply = served.sdk.responses.create(model="scripted", input="Play music.", tools=TOOLS)  # type: ignore[arg-type]
    assert reply.output[1].tools == []  # type: ignore[union-attr]
    assert "No tools matched" in str(model.requests[-1].items)
    assert _offered(model) == ["tool_search", "add_numbers"]


def test_the_stream_carries_both_items(scripted_module: tuple[InProcess, ScriptedBackend]) -> None:
    from tests.http.test_streaming import parse_frames

    served, model = scripted_module
    model.turns += [call("tool_search", json.dumps({"query": "send an email"})), text("Ready.")]
    body = {"model": "scripted", "input": "Mail Bob.", "tools": TOOLS, "stream": True}
    events = parse_frames(served.http.post("/v1/responses", json=body).content)
    items = [(event["type"], event["item"]["type"], event["item"]["status"]) for event in events
             if event["type"].startswith("response.output_item")]  # fmt: skip
    assert items[:4] == [("response.output_item.added", "tool_search_call", "in_progress"),
                         ("response.output_item.done", "tool_search_call", "completed"),
                         ("response.output_item.added", "tool_search_output", "completed"),
                         ("response.output_item.done", "tool_search_output", "completed")]  # fmt: skip


def test_without_a_server_search_deferred_tools_are_offered_at_once(
    scripted_module: tuple[InProcess, ScriptedBackend],
) -> None:
    served, model = scripted_module
    model.turns.append(text("Hi."))
    client_search = [{"type": "tool_search", "execution": "client"}, *TOOLS[1:]]
    served.sdk.responses.create(model="scripted", input="Hi.", tools=client_search)  # type: ignore[arg-type]
    assert {"get_weather", "send_email", "crm__find_customer"} <= set(_offered(model))


def test_a_deferred_mcp_servers_tools_are_found_then_run_by_the_server(tmp_path: Any) -> None:
    recorder = streamable_app()
    model = ScriptedBackend()
    with serve_app(recorder) as mcp, in_process(Settings(db_url=f"sqlite:///{tmp_path / 'm.db'}", embedded=False),
                                                backends=[model]) as served:  # fmt: skip
        server = {"type": "mcp", "server_label": "calc", "server_url": f"{mcp.url}/mcp", "defer_loading": True,
                  "require_approval": "never"}  # fmt: skip
        model.turns += [call("tool_search", json.dumps({"query": "add two integers"})),
                        call("add", json.dumps({"a": 4, "b": 5})), text("It is 9.")]  # fmt: skip
        reply = served.sdk.responses.create(model="scripted", input="4+5?", tools=[SEARCH, server])  # type: ignore[list-item]
    assert _offered(model, 0) == ["tool_search"]
    assert "add" in _offered(model, 1)
    kinds = [item.type for item in reply.output]
    assert kinds == ["mcp_list_tools", "tool_search_call", "tool_search_output", "mcp_call", "message"]
    loaded = reply.output[2].tools[0]  # type: ignore[union-attr]
    assert loaded.type == "mcp" and loaded.server_label == "calc" and "add" in loaded.allowed_tools  # type: ignore[union-attr, operator]
    assert reply.output[3].output == "9" and reply.output_text == "It is 9."  # type: ignore[union-attr]


def test_an_agents_sdk_tool_search_tool_finds_and_runs_a_deferred_function(
    upstream_live: LiveServer, upstream: MockUpstream
) -> None:
    """The SDK's ToolSearchTool() never runs a search itself: the server's loads the function, the
    model calls it, the SDK runs it and the model answers."""
    os.environ.setdefault("OPENAI_AGENTS_DISABLE_TRACING", "1")
    import agents

    agents.set_tracing_disabled(True)
    cities: list[str] = []

    @agents.function_tool(defer_loading=True)
    def get_weather(city: str) -> str:
        """The weather forecast in a city today."""
        cities.append(city)
        return "Sunny and 21 degrees."

    @agents.function_tool(defer_loading=True)
    def send_email(to: str, body: str) -> str:
        """Send an email message to a recipient."""
        return "sent"

    upstream.script += [call_turn("tool_search", {"query": "weather forecast"}, "call_search"),
                        call_turn("get_weather", {"city": "Paris"}, "call_weather")]  # fmt: skip
    upstream.script.append(Stream(text_chunks("Sunny in Paris.")))

    async def run() -> Any:
        async with openai.AsyncOpenAI(base_url=upstream_live.v1, api_key="-", max_retries=0) as sdk:
            agent = agents.Agent(name="helper", tools=[get_weather, send_email, agents.ToolSearchTool()],
                                 model=agents.OpenAIResponsesModel(model="up-model", openai_client=sdk))  # fmt: skip
            return await agents.Runner.run(agent, "Weather in Paris?", max_turns=4)

    result = asyncio.run(run())
    assert result.final_output == "Sunny in Paris." and cities == ["Paris"]
    assert [tool["function"]["name"] for tool in upstream.requests[-3]["tools"]] == ["tool_search"]
    assert "get_weather" in [tool["function"]["name"] for tool in upstream.requests[-2]["tools"]]
    kinds = [item.type for item in result.new_items]
    assert "tool_search_call_item" in kinds and "tool_search_output_item" in kinds


def test_an_agents_sdk_tool_search_tool_finds_a_deferred_mcp_servers_tool(
    upstream_live: LiveServer, upstream: MockUpstream
) -> None:
    """The SDK's HostedMCPTool marked defer_loading, behind its ToolSearchTool: the server's search
    loads the MCP tool, the model calls it, the server runs it."""
    import agents

    agents.set_tracing_disabled(True)
    recorder = streamable_app()
    with serve_app(recorder) as mcp:
        server = {"type": "mcp", "server_label": "calc", "server_url": f"{mcp.url}/mcp", "defer_loading": True,
                  "require_approval": "never"}  # fmt: skip
        upstream.script += [call_turn("tool_search", {"query": "add two integers"}, "call_search"),
                            call_turn("add", {"a": 20, "b": 22}, "call_add")]  # fmt: skip
        upstream.script.append(Stream(text_chunks("It is 42.")))

        async def run() -> Any:
            async with openai.AsyncOpenAI(base_url=upstream_live.v1, api_key="-", max_retries=0) as sdk:
                agent = agents.Agent(name="calc", tools=[agents.HostedMCPTool(tool_config=server),  # type: ignore[arg-type]
                                                         agents.ToolSearchTool()],
                                     model=agents.OpenAIResponsesModel(model="up-model", openai_client=sdk))  # fmt: skip
                return await agents.Runner.run(agent, "20+22?", max_turns=3)

        result = asyncio.run(run())
    assert result.final_output == "It is 42."
    assert [tool["function"]["name"] for tool in upstream.requests[-3]["tools"]] == ["tool_search"]
    assert "42" in str(upstream.requests[-1]["messages"])


@pytest.mark.parametrize("model", ["sim", "smollm2-135m-instruct"])
def test_the_simulator_and_the_embedded_model_search_when_forced(upstream_live: LiveServer, model: str) -> None:
    """Whatever query the simulator or the packaged model writes, held to the search, the server answers
    it: a tool_search_call and its output (the tools it loaded, if any matched)."""
    with openai.OpenAI(base_url=upstream_live.v1, api_key="-", max_retries=0) as client:
        reply = client.responses.create(model=model, input="Find a tool for the weather forecast.", tools=TOOLS,  # type: ignore[arg-type]
                                        tool_choice={"type": "tool_search"}, max_output_tokens=120,  # type: ignore[arg-type]
                                        temperature=0)  # fmt: skip
    kinds = [item.type for item in reply.output]
    assert kinds[:2] == ["tool_search_call", "tool_search_output"], kinds
    search, output = reply.output[0], reply.output[1]
    assert search.execution == "server" and output.execution == "server" and output.call_id == search.call_id  # type: ignore[union-attr]
    assert all(tool.type in ("function", "namespace") for tool in output.tools)  # type: ignore[union-attr]


def test_what_a_search_loaded_is_offered_on_the_conversations_later_turns(
    scripted_module: tuple[InProcess, ScriptedBackend],
) -> None:
    served, model = scripted_module
    conversation = served.sdk.conversations.create()
    model.turns += [call("tool_search", json.dumps({"query": "send an email message"})), text("Loaded.")]
    served.sdk.responses.create(model="scripted", input="Get ready to mail.", tools=TOOLS, conversation=conversation.id)  # type: ignore[arg-type]
    model.turns.append(text("Sent."))
    served.sdk.responses.create(model="scripted", input="Mail Bob now.", tools=TOOLS, conversation=conversation.id)  # type: ignore[arg-type]
    assert "send_email" in _offered(model) and "get_weather" not in _offered(model)
