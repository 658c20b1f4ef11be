"""MCP tools executed by the server, against real MCP servers (the mcp SDK's MCPServer) on loopback."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import openai
import pytest

from responsa.backends.llama_cpp import DEFAULT_MODEL_NAME
from responsa.config import Settings
from tests.conftest import LiveServer, serve, serve_app, store_contains
from tests.engine.tools.mcp_server import Recorder, sse_app, streamable_app
from tests.http.test_streaming import WEATHER_TOOL, parse_frames, without_parsed


class McpServer:
    def __init__(self, recorder: Recorder, url: str) -> None:
        self.recorder = recorder
        self.url = url

    def tool(self, label: str = "calc", **extra: Any) -> dict[str, Any]:
        return {"type": "mcp", "server_label": label, "server_url": self.url, **extra}


@pytest.fixture(scope="module")
def mcp() -> Iterator[McpServer]:
    recorder = streamable_app()
    with serve_app(recorder) as live:
        yield McpServer(recorder, f"{live.url}/mcp")


@pytest.fixture(scope="module")
def mcp_sse() -> Iterator[McpServer]:
    recorder = sse_app()
    with serve_app(recorder) as live:
        yield McpServer(recorder, f"{live.url}/sse")


@pytest.fixture(scope="module")
def quick(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveServer]:
    """A server whose MCP calls time out after one second."""
    db = tmp_path_factory.mktemp("quick") / "q.db"
    with serve(Settings(db_url=f"sqlite:///{db}", mcp_call_timeout_secs=1, mcp_list_timeout_secs=2)) as live:
        yield live


def kinds(response: Any) -> list[str]:
    return [item.type for item in response.output]


def test_lists_calls_and_answers(client: openai.OpenAI, mcp: McpServer) -> None:
    reply = client.responses.create(model="sim", input="Please add 2 and 3", tools=[mcp.tool()])
    assert kinds(reply) == ["mcp_list_tools", "mcp_call", "message"]
    listing, call, _message = reply.output
    assert listing.server_label == "calc" and listing.id.startswith("mcpl_")
    assert {tool.name for tool in listing.tools} == {"add", "get_forecast", "slow_answer", "explode"}
    add = next(tool for tool in listing.tools if tool.name == "add")
    assert add.input_schema["required"] == ["a", "b"]
    assert (call.name, json.loads(call.arguments), call.output) == ("add", {"a": 2, "b": 3}, "5")
    assert call.status == "completed" and call.error is None and call.server_label == "calc"
    assert "5" in reply.output_text and reply.status == "completed"
    assert client.responses.retrieve(reply.id).model_dump() == reply.model_dump()


def test_streaming_events_of_listing_and_call(client: openai.OpenAI, http: httpx.Client, mcp: McpServer) -> None:
    body = {"model": "sim", "input": "What's the forecast for Lisbon?", "tools": [mcp.tool("weather")], "stream": True}
    events = parse_frames(http.post("/v1/responses", json=body).content)
    listing = [(e["type"], e.get("output_index")) for e in events if e.get("output_index") == 0]
    assert listing == [
        ("response.output_item.added", 0),
        ("response.mcp_list_tools.in_progress", 0),
        ("response.mcp_list_tools.completed", 0),
        ("response.output_item.done", 0),
    ]
    call = [e for e in events if e.get("output_index") == 1]
    call_kinds = [e["type"] for e in call]
    assert call_kinds[:2] == ["response.output_item.added", "response.mcp_call.in_progress"]
    assert call_kinds[-3:] == [
        "response.mcp_call_arguments.done",
        "response.mcp_call.completed",
        "response.output_item.done",
    ]
    assert set(call_kinds[2:-3]) == {"response.mcp_call_arguments.delta"}
    assert call[0]["item"]["status"] == "in_progress" and call[0]["item"]["arguments"] == ""
    assert "".join(e["delta"] for e in call[2:-3]) == call[-3]["arguments"] == '{"city":"Lisbon"}'
    assert call[-1]["item"]["output"] == "Forecast for Lisbon: sunny, 21C"
    assert events[-1]["type"] == "response.completed"
    assert "sunny, 21C" in events[-1]["response"]["output"][2]["content"][0]["text"]
    with client.responses.stream(model="sim", input="Please add 4 and 5", tools=[mcp.tool()]) as stream:
        final = stream.get_final_response()
    assert client.responses.retrieve(final.id).model_dump() == without_parsed(final.model_dump())


def test_listing_is_reused_from_earlier_turns(client: openai.OpenAI, mcp: McpServer) -> None:
    first = client.responses.create(model="sim", input="Please add 1 and 1", tools=[mcp.tool()])
    second = client.responses.create(
        model="sim", input="Now add 7 and 8", tools=[mcp.tool()], previous_response_id=first.id
    )
    # No new mcp_list_tools item: the listing of the first turn serves (the SDK's own tools/list
    # after a tools/call, for output schemas, is not ours to count).
    assert kinds(second) == ["mcp_call", "message"]
    assert second.output[0].output == "15"


def test_sse_transport(client: openai.OpenAI, mcp_sse: McpServer) -> None:
    reply = client.responses.create(model="sim", input="Please add 20 and 22", tools=[mcp_sse.tool()])
    assert kinds(reply) == ["mcp_list_tools", "mcp_call", "message"] and reply.output[1].output == "42"


def test_a_failing_tool_is_an_error_item_not_a_failed_response(client: openai.OpenAI, mcp: McpServer) -> None:
    reply = client.responses.create(
        model="sim", input="Make it explode", tools=[mcp.tool()],
        tool_choice={"type": "mcp", "server_label": "calc", "name": "explode"}, max_tool_calls=1,
    )  # fmt: skip
    call = reply.output[1]
    assert call.type == "mcp_call" and call.status == "failed" and call.output is None
    assert call.error is not None and call.error.type == "mcp_tool_execution_error"
    assert reply.status == "completed" and "Error" in reply.output_text


def test_a_slow_tool_times_out_into_an_error(quick: LiveServer, mcp: McpServer) -> None:
    started = time.monotonic()
    with openai.OpenAI(base_url=quick.v1, api_key="x", max_retries=0) as sdk:
        reply = sdk.responses.create(
            model="sim", input="Wait 5 seconds for the slow answer", tools=[mcp.tool()],
            tool_choice={"type": "mcp", "server_label": "calc", "name": "slow_answer"}, max_tool_calls=1,
        )  # fmt: skip
    call = reply.output[1]
    assert call.status == "failed" and call.error is not None and call.error.type == "mcp_protocol_error"
    assert "timed out" in call.error.message  # type: ignore[union-attr]
    assert reply.status == "completed" and time.monotonic() - started < 4.5


def test_an_unreachable_server_is_a_listing_error(client: openai.OpenAI) -> None:
    tool = {"type": "mcp", "server_label": "gone", "server_url": "http://127.0.0.1:9/mcp"}
    reply = client.responses.create(model="sim", input="Please add 2 and 3", tools=[tool])
    assert kinds(reply) == ["mcp_list_tools", "message"]
    assert reply.output[0].error and reply.output[0].tools == []
    assert reply.status == "completed"


def test_allowed_tools_limit_what_the_model_can_call(client: openai.OpenAI, mcp: McpServer) -> None:
    reply = client.responses.create(
        model="sim", input="Please add 2 and 3", tools=[mcp.tool(allowed_tools=["get_forecast"])]
    )
    assert "mcp_call" not in kinds(reply)
    reply = client.responses.create(
        model="sim", input="Please add 2 and 3", tools=[mcp.tool(allowed_tools={"tool_names": ["add"]})]
    )
    assert reply.output[1].name == "add"


def test_approval_then_approve(client: openai.OpenAI, mcp: McpServer) -> None:
    tool = mcp.tool(require_approval="always")
    asked = client.responses.create(model="sim", input="Please add 6 and 7", tools=[tool])
    assert kinds(asked) == ["mcp_list_tools", "mcp_approval_request"]
    request = asked.output[1]
    assert (
        request.id.startswith("mcpr_") and request.name == "add" and json.loads(request.arguments) == {"a": 6, "b": 7}
    )
    calls_before = mcp.recorder.methods.count("tools/call")
    approved = client.responses.create(
        model="sim", previous_response_id=asked.id, tools=[tool],
        input=[{"type": "mcp_approval_response", "approval_request_id": request.id, "approve": True}],
    )  # fmt: skip
    assert kinds(approved) == ["mcp_call", "message"]
    assert approved.output[0].approval_request_id == request.id and approved.output[0].output == "13"
    assert "13" in approved.output_text
    assert mcp.recorder.methods.count("tools/call") == calls_before + 1


def test_approval_then_deny_through_a_conversation(client: openai.OpenAI, mcp: McpServer) -> None:
    tool = mcp.tool(require_approval={"always": {"tool_names": ["add"]}})
    conversation = client.conversations.create()
    asked = client.responses.create(model="sim", input="Please add 6 and 7", tools=[tool], conversation=conversation.id)
    request = asked.output[-1]
    assert request.type == "mcp_approval_request"
    calls_before = mcp.recorder.methods.count("tools/call")
    denied = client.responses.create(
        model="sim", conversation=conversation.id, tools=[tool],
        input=[{"type": "mcp_approval_response", "approval_request_id": request.id, "approve": False,
                "reason": "not now"}],
    )  # fmt: skip
    assert kinds(denied) == ["message"] and "declined" in denied.output_text
    assert mcp.recorder.methods.count("tools/call") == calls_before


def test_per_tool_never_skips_approval(client: openai.OpenAI, mcp: McpServer) -> None:
    tool = mcp.tool(require_approval={"never": {"tool_names": ["add"]}})
    reply = client.responses.create(model="sim", input="Please add 6 and 7", tools=[tool])
    assert kinds(reply) == ["mcp_list_tools", "mcp_call", "message"]


def test_unknown_approval_id_is_a_400(client: openai.OpenAI, mcp: McpServer, http: httpx.Client) -> None:
    first = client.responses.create(model="sim", input="hi", tools=[mcp.tool()])
    body = {"model": "sim", "previous_response_id": first.id, "tools": [mcp.tool()],
            "input": [{"type": "mcp_approval_response", "approval_request_id": "mcpr_nope", "approve": True}]}  # fmt: skip
    reply = http.post("/v1/responses", json=body)
    assert reply.status_code == 400 and reply.json()["error"]["param"] == "input[0].approval_request_id"


def test_function_tools_end_the_loop_for_the_client(client: openai.OpenAI, mcp: McpServer) -> None:
    reply = client.responses.create(model="sim", input="What's the weather in Oslo?", tools=[mcp.tool(), WEATHER_TOOL])
    assert kinds(reply) == ["mcp_list_tools", "function_call"]
    assert reply.output[1].name == "get_weather"


def test_max_tool_calls_bounds_the_loop(client: openai.OpenAI, mcp: McpServer) -> None:
    reply = client.responses.create(
        model="sim", input="Please add 1 and 2", tools=[mcp.tool()], tool_choice="required", max_tool_calls=0
    )
    assert kinds(reply) == ["mcp_list_tools", "message"]


@pytest.mark.parametrize(
    "choice",
    ["required", {"type": "mcp", "server_label": "calc", "name": "add"}, {"type": "mcp", "server_label": "calc"},
     {"type": "allowed_tools", "mode": "required", "tools": [{"type": "mcp", "server_label": "calc"}]}],
)  # fmt: skip
def test_a_forced_or_required_tool_is_called_once_then_the_model_answers(
    client: openai.OpenAI, mcp: McpServer, choice: Any
) -> None:
    """The choice is met by the first call; the next round is ``auto`` (it used to call 9 times)."""
    before = mcp.recorder.methods.count("tools/call")
    reply = client.responses.create(model="sim", input="Please add 1 and 2", tools=[mcp.tool()], tool_choice=choice)
    assert kinds(reply) == ["mcp_list_tools", "mcp_call", "message"]
    assert reply.output[1].name == "add" and reply.output[1].output == "3"
    assert mcp.recorder.methods.count("tools/call") == before + 1
    assert reply.tool_choice == client.responses.retrieve(reply.id).tool_choice  # echoed as asked


def test_a_tool_two_servers_share_is_called_by_its_own_name(client: openai.OpenAI, mcp: McpServer) -> None:
    """The second server's ``add`` reaches the model as ``other_add``; the call names the server's tool."""
    choice = {"type": "mcp", "server_label": "other", "name": "add"}
    reply = client.responses.create(model="sim", input="Please add 1 and 2", tools=[mcp.tool(), mcp.tool("other")],
                                    tool_choice=choice)  # fmt: skip
    assert kinds(reply) == ["mcp_list_tools", "mcp_list_tools", "mcp_call", "message"]
    call = reply.output[2]
    assert (call.server_label, call.name, call.error, call.output) == ("other", "add", None, "3")


def test_allowed_tools_limit_the_listing_too(client: openai.OpenAI, mcp: McpServer) -> None:
    reply = client.responses.create(
        model="sim", input="Please add 2 and 3", tools=[mcp.tool(allowed_tools={"tool_names": ["add"]})]
    )
    assert [tool.name for tool in reply.output[0].tools] == ["add"]
    assert reply.output[1].name == "add"


def test_headers_reach_the_server_but_are_never_echoed_or_stored(
    client: openai.OpenAI, mcp: McpServer, http: httpx.Client, server: LiveServer
) -> None:
    secret = "Bearer s3cret-token-for-mcp"
    body = {"model": "sim", "input": "Please add 2 and 3", "tools": [mcp.tool(headers={"authorization": secret})]}
    reply = http.post("/v1/responses", json=body)
    assert reply.status_code == 200
    assert secret not in reply.text
    assert any(headers.get("authorization") == secret for headers in mcp.recorder.headers)
    assert secret not in http.get(f"/v1/responses/{reply.json()['id']}").text
    streamed = http.post("/v1/responses", json={**body, "stream": True}).text
    assert secret not in streamed
    assert store_contains(server.settings.db_url, "Please add 2 and 3")  # the search does see stored data
    assert not store_contains(server.settings.db_url, secret)


def test_an_authorization_token_reaches_the_server_as_a_bearer_but_is_never_echoed_or_stored(
    client: openai.OpenAI, mcp: McpServer, http: httpx.Client, server: LiveServer
) -> None:
    token = "oauth-token-for-the-mcp-server"
    body = {"model": "sim", "input": "Please add 4 and 5", "tools": [mcp.tool(authorization=token)]}
    reply = http.post("/v1/responses", json=body)
    assert reply.status_code == 200 and token not in reply.text
    assert any(headers.get("authorization") == f"Bearer {token}" for headers in mcp.recorder.headers)
    assert token not in http.get(f"/v1/responses/{reply.json()['id']}").text
    assert not store_contains(server.settings.db_url, token)


@pytest.mark.parametrize(
    ("extra", "param"),
    [({"connector_id": "connector_gmail"}, "tools[0].connector_id"), ({"tunnel_id": "tun_1"}, "tools[0].tunnel_id"),
     ({"allowed_callers": ["programmatic"]}, "tools[0].allowed_callers")],
)  # fmt: skip
def test_what_no_mcp_server_here_can_do_is_a_400(
    mcp: McpServer, http: httpx.Client, extra: dict[str, Any], param: str
) -> None:
    """OpenAI's MCP tool fields are read, never silently ignored: what cannot be honoured is refused."""
    calls = len(mcp.recorder.headers)
    body = {"model": "sim", "input": "Please add 4 and 5", "tools": [mcp.tool(**extra)]}
    reply = http.post("/v1/responses", json=body)
    assert reply.status_code == 400 and reply.json()["error"]["param"] == param
    assert len(mcp.recorder.headers) == calls  # refused before any request to the server
    allowed = {**body, "tools": [mcp.tool(allowed_callers=["direct", "programmatic"], defer_loading=False)]}
    assert http.post("/v1/responses", json=allowed).status_code == 200


def test_a_bad_server_label_names_its_field(http: httpx.Client) -> None:
    tool = {"type": "mcp", "server_label": "bad label", "server_url": "http://127.0.0.1:9/mcp"}
    reply = http.post("/v1/responses", json={"model": "sim", "input": "x", "tools": [tool]})
    assert reply.status_code == 400 and reply.json()["error"]["param"] == "tools[0].server_label"


@pytest.mark.parametrize(
    "url",
    ["http://169.254.169.254/mcp", "http://metadata.google.internal/mcp", "http://example.com/mcp",
     "http://[fe80::1]/mcp", "ftp://127.0.0.1/mcp", None],
)  # fmt: skip
def test_server_url_policy(http: httpx.Client, url: str | None) -> None:
    """A real model gets a 400; the simulator simulates a refused server instead (not a malformed one)."""
    tool: dict[str, Any] = {"type": "mcp", "server_label": "x"}
    if url is not None:
        tool["server_url"] = url
    reply = http.post("/v1/responses", json={"model": DEFAULT_MODEL_NAME, "input": "hi", "tools": [tool]})
    assert reply.status_code == 400
    assert reply.json()["error"]["param"] == "tools[0].server_url"
    simulated = http.post("/v1/responses", json={"model": "sim", "input": "hi", "tools": [tool]})
    assert simulated.status_code == (400 if url is None or url.startswith("ftp:") else 200)


def test_allowed_host_opens_the_policy(tmp_path: Path, mcp: McpServer) -> None:
    url = mcp.url.replace("127.0.0.1", "localhost")
    with serve(Settings(db_url=f"sqlite:///{tmp_path / 'a.db'}")) as live:
        assert httpx.post(f"{live.v1}/responses", json={"model": "sim", "input": "Please add 2 and 3",
                          "tools": [{"type": "mcp", "server_label": "c", "server_url": url}]}).status_code == 200  # fmt: skip
        blocked = {"type": "mcp", "server_label": "c", "server_url": "http://mcp.internal.example/mcp"}
        body = {"model": DEFAULT_MODEL_NAME, "input": "x", "tools": [blocked]}
        assert httpx.post(f"{live.v1}/responses", json=body, timeout=30).status_code == 400
    settings = Settings(
        db_url=f"sqlite:///{tmp_path / 'b.db'}", embedded=False, mcp_allow_hosts=("mcp.internal.example",)
    )
    with serve(settings) as live:
        reply = httpx.post(f"{live.v1}/responses", json={"model": "sim", "input": "x", "tools": [blocked]}, timeout=30)
        assert reply.status_code == 200 and reply.json()["output"][0]["error"]


def test_input_tokens_count_what_the_mcp_listing_adds_as_a_create_does(client: openai.OpenAI, mcp: McpServer) -> None:
    """``/responses/input_tokens`` counts the model request a create builds: the server's MCP listing
    (the tools it offers the model, the ``mcp_list_tools`` item) included."""
    body: dict[str, Any] = {"model": "sim", "input": "Say hi to the team", "tools": [mcp.tool()]}
    counted = client.responses.input_tokens.count(**body).input_tokens
    created = client.responses.create(**body)
    assert kinds(created) == ["mcp_list_tools", "message"]
    assert created.usage is not None and counted == created.usage.input_tokens
    bare = client.responses.input_tokens.count(model="sim", input="Say hi to the team").input_tokens
    assert counted > bare
