"""The tools agent clients send: ``namespace``, ``custom``, ``shell`` / ``local_shell`` /
``apply_patch``, client-side ``tool_search``, and hosted tools a backend cannot run. Through the
HTTP API on an upstream (which shows what the model was offered and read), the simulator and the
embedded model."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import openai
import pytest
from lark import Lark

from responsa.backends.llama_cpp import DEFAULT_MODEL_NAME
from tests.backends.mock_upstream import Stream
from tests.backends.test_chat_completions import Rig, start_rig
from tests.conftest import LiveServer, sqlite_server
from tests.http.test_streaming import parse_frames

CODEX_REQUEST = json.loads((Path(__file__).parent / "codex_request.json").read_text())
"""A request Codex CLI 0.169 sent (its real tools: functions, a namespace, the apply_patch custom
tool with its Lark grammar, tool_search and web_search), with a short input."""

SPAWN = {
    "type": "function",
    "name": "spawn_agent",
    "description": "Start a sub-agent on a task.",
    "parameters": {"type": "object", "properties": {"task": {"type": "string"}}, "required": ["task"]},
}
AGENTS = {"type": "namespace", "name": "agents", "description": "Sub-agents.", "tools": [SPAWN]}
PATCH_TOOL = {
    "type": "custom",
    "name": "apply_patch",
    "description": "Edit files with a patch.",
    "format": {"type": "grammar", "syntax": "lark", "definition": 'start: "*** Begin Patch" /(.|\\n)*/'},
}


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveServer]:
    yield from sqlite_server(tmp_path_factory, "agent-tools")


@pytest.fixture
def rig(tmp_path: Path) -> Iterator[Rig]:
    yield from start_rig(tmp_path)


def call(name: str, arguments: str, index: int = 0) -> dict[str, Any]:
    entry = {
        "index": index,
        "id": f"call_{index}",
        "type": "function",
        "function": {"name": name, "arguments": arguments},
    }
    return {"choices": [{"index": 0, "delta": {"tool_calls": [entry]}}]}


def more(arguments: str, index: int = 0) -> dict[str, Any]:
    return {
        "choices": [{"index": 0, "delta": {"tool_calls": [{"index": index, "function": {"arguments": arguments}}]}}]
    }


TOOL_CALLS_DONE = {"choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}]}


def offered(rig: Rig, request: int = -1) -> list[str]:
    return [tool["function"]["name"] for tool in rig.first.requests[request].get("tools", [])]


def test_namespace_function_is_offered_and_called_by_its_namespace(rig: Rig) -> None:
    rig.first.script.append(Stream([call("agents__spawn_agent", '{"task": "lint"}'), TOOL_CALLS_DONE]))
    response = rig.sdk.responses.create(model="up-model", input="Spawn a linter", tools=[AGENTS])  # type: ignore[list-item]
    assert offered(rig) == ["agents__spawn_agent"]
    (item,) = response.output
    assert item.type == "function_call"
    assert (item.name, item.namespace, json.loads(item.arguments)) == ("spawn_agent", "agents", {"task": "lint"})

    follow = rig.sdk.responses.create(model="up-model", previous_response_id=response.id, tools=[AGENTS],  # type: ignore[list-item]
                                      input=[{"type": "function_call_output", "call_id": item.call_id, "output": "agent 7"}])  # fmt: skip
    assert follow.status == "completed"
    messages = rig.first.requests[-1]["messages"]
    assert messages[-2]["tool_calls"][0]["function"]["name"] == "agents__spawn_agent"
    assert messages[-1] == {"role": "tool", "tool_call_id": item.call_id, "content": "agent 7"}


def test_tool_choice_and_allowed_tools_name_namespaced_tools(rig: Rig) -> None:
    other = {**SPAWN, "name": "close_agent"}
    tools = [
        {**AGENTS, "tools": [SPAWN, other]},
        {"type": "function", "name": "ping", "parameters": {"type": "object"}},
    ]
    rig.first.script.append(Stream([call("agents__close_agent", "{}"), TOOL_CALLS_DONE]))
    rig.sdk.responses.create(model="up-model", input="x", tools=tools,  # type: ignore[arg-type]
                             tool_choice={"type": "function", "name": "close_agent", "namespace": "agents"})  # type: ignore[arg-type]  # fmt: skip
    assert rig.first.requests[-1]["tool_choice"] == {"type": "function", "function": {"name": "agents__close_agent"}}

    rig.sdk.responses.create(model="up-model", input="x", tools=tools,  # type: ignore[arg-type]
                             tool_choice={"type": "allowed_tools", "mode": "auto", "tools": [{"type": "namespace", "name": "agents"}]})  # type: ignore[arg-type]  # fmt: skip
    assert offered(rig) == ["agents__spawn_agent", "agents__close_agent", "ping"]  # every definition stays
    assert rig.first.requests[-1]["tool_choice"] == "auto"  # the calls are held to the namespace by the server

    unknown = rig.http.post("/v1/responses", json={"model": "up-model", "input": "x", "tools": tools,
                                                   "tool_choice": {"type": "function", "name": "nope"}})  # fmt: skip
    assert unknown.status_code == 400 and unknown.json()["error"]["param"] == "tool_choice"


def test_custom_tool_call_streams_its_input_and_its_output_goes_back(rig: Rig) -> None:
    patch = '*** Begin Patch\n*** Add File: a.txt\n+say "hi" \\ bye\n*** End Patch\n'
    arguments = json.dumps({"input": patch})
    rig.first.script.append(Stream([call("apply_patch", arguments[:9]), more(arguments[9:30]), more(arguments[30:]),
                                    TOOL_CALLS_DONE]))  # fmt: skip
    raw = rig.http.post("/v1/responses", json={"model": "up-model", "input": "Add a.txt", "tools": [PATCH_TOOL],
                                               "stream": True}).content  # fmt: skip
    events = parse_frames(raw)
    deltas = [e["delta"] for e in events if e["type"] == "response.custom_tool_call_input.delta"]
    assert "".join(deltas) == patch and len(deltas) >= 2
    (done,) = [e for e in events if e["type"] == "response.custom_tool_call_input.done"]
    assert done["input"] == patch
    item = events[-1]["response"]["output"][0]
    assert (item["type"], item["name"], item["input"], item["call_id"]) == (
        "custom_tool_call",
        "apply_patch",
        patch,
        "call_0",
    )
    offer = rig.first.requests[-1]["tools"][0]["function"]
    assert offer["parameters"]["required"] == ["input"] and "lark grammar" in offer["description"]

    history = [{"role": "user", "content": "Add a.txt"}, item,
               {"type": "custom_tool_call_output", "call_id": "call_0", "output": "Done!"}]  # fmt: skip
    follow = rig.sdk.responses.create(model="up-model", input=history, tools=[PATCH_TOOL], store=False)  # type: ignore[arg-type,list-item]
    assert follow.status == "completed"
    messages = rig.first.requests[-1]["messages"]
    assert json.loads(messages[-2]["tool_calls"][0]["function"]["arguments"]) == {"input": patch}
    assert messages[-1]["content"] == "Done!"


def test_custom_tool_choice_forces_it(rig: Rig) -> None:
    rig.first.script.append(Stream([call("apply_patch", '{"input": "x"}'), TOOL_CALLS_DONE]))
    response = rig.sdk.responses.create(model="up-model", input="x", tools=[PATCH_TOOL],  # type: ignore[list-item]
                                        tool_choice={"type": "custom", "name": "apply_patch"})  # fmt: skip
    assert rig.first.requests[-1]["tool_choice"] == {"type": "function", "function": {"name": "apply_patch"}}
    assert response.output[0].type == "custom_tool_call"


@pytest.mark.parametrize(
    ("tool", "arguments", "expected"),
    [
        ({"type": "shell"}, '{"commands": ["ls -la", "pwd"], "timeout_ms": 5000}',
         {"type": "shell_call", "action": {"commands": ["ls -la", "pwd"], "timeout_ms": 5000}}),
        ({"type": "local_shell"}, '{"command": ["ls", "-la"], "working_directory": "/tmp"}',
         {"type": "local_shell_call", "action": {"type": "exec", "command": ["ls", "-la"], "env": {}, "working_directory": "/tmp"}}),
        ({"type": "apply_patch"}, '{"type": "update_file", "path": "a.py", "diff": "@@\\n-a\\n+b"}',
         {"type": "apply_patch_call", "operation": {"type": "update_file", "path": "a.py", "diff": "@@\n-a\n+b"}}),
    ],
)  # fmt: skip
def test_client_tool_types_become_their_own_call_items(
    rig: Rig, tool: dict[str, Any], arguments: str, expected: dict[str, Any]
) -> None:
    rig.first.script.append(Stream([call(tool["type"], arguments), TOOL_CALLS_DONE]))
    reply = rig.http.post("/v1/responses", json={"model": "up-model", "input": "go", "tools": [tool]})
    assert reply.status_code == 200, reply.text
    assert offered(rig) == [tool["type"]]
    (item,) = reply.json()["output"]
    assert {key: item[key] for key in expected} == expected
    assert item["call_id"] == "call_0" and item["status"] == "completed"


def test_shell_and_apply_patch_outputs_reach_the_model(rig: Rig) -> None:
    history = [
        {"role": "user", "content": "look"},
        {"type": "shell_call", "id": "sh_1", "call_id": "c1", "action": {"commands": ["ls"]}, "status": "completed"},
        {"type": "shell_call_output", "call_id": "c1",
         "output": [{"stdout": "a.py\n", "stderr": "", "outcome": {"type": "exit", "exit_code": 0}}]},
        {"type": "apply_patch_call", "id": "apc_1", "call_id": "c2", "status": "completed",
         "operation": {"type": "delete_file", "path": "a.py"}},
        {"type": "apply_patch_call_output", "call_id": "c2", "status": "failed", "output": "permission denied"},
        {"type": "local_shell_call", "id": "lsh_1", "call_id": "c3", "status": "completed",
         "action": {"type": "exec", "command": ["whoami"], "env": {}}},
        {"type": "local_shell_call_output", "id": "c3", "output": "root"},
    ]  # fmt: skip
    tools = [{"type": "shell"}, {"type": "apply_patch"}, {"type": "local_shell"}]
    reply = rig.http.post("/v1/responses", json={"model": "up-model", "input": history, "tools": tools})
    assert reply.status_code == 200, reply.text
    messages = rig.first.requests[-1]["messages"]
    calls = [
        (m["tool_calls"][0]["function"]["name"], m["tool_calls"][0]["id"]) for m in messages if m.get("tool_calls")
    ]
    assert calls == [("shell", "c1"), ("apply_patch", "c2"), ("local_shell", "c3")]
    results = {m["tool_call_id"]: m["content"] for m in messages if m["role"] == "tool"}
    assert results["c1"].startswith("a.py") and "exit code 0" in results["c1"]
    assert results["c2"] == "failed: permission denied"
    assert results["c3"] == "root"


def test_client_tool_search_and_the_tools_it_found(rig: Rig) -> None:
    search = {"type": "tool_search", "execution": "client", "description": "Find tools.",
              "parameters": {"type": "object", "properties": {"query": {"type": "string"}}, "required": ["query"]}}  # fmt: skip
    rig.first.script.append(Stream([call("tool_search", '{"query": "calendar"}'), TOOL_CALLS_DONE]))
    first = rig.http.post("/v1/responses", json={"model": "up-model", "input": "book it", "tools": [search]}).json()
    (item,) = first["output"]
    assert (item["type"], item["arguments"], item["execution"]) == ("tool_search_call", {"query": "calendar"}, "client")
    found = {"type": "tool_search_output", "call_id": item["call_id"], "execution": "client", "status": "completed",
             "tools": [{"type": "function", "name": "book_meeting", "description": "Book a meeting.",
                        "parameters": {"type": "object", "properties": {}}}]}  # fmt: skip
    reply = rig.http.post("/v1/responses", json={"model": "up-model", "previous_response_id": first["id"],
                                                 "input": [found], "tools": [search]})  # fmt: skip
    assert reply.status_code == 200, reply.text
    assert offered(rig) == ["tool_search", "book_meeting"]
    assert "book_meeting" in rig.first.requests[-1]["messages"][-1]["content"]


def test_hosted_tool_the_upstream_cannot_run_is_left_out_and_reported(rig: Rig) -> None:
    tools = [{"type": "web_search", "external_web_access": False}, {"type": "shell"}]
    response = rig.sdk.responses.create(model="up-model", input="hi", tools=tools)  # type: ignore[arg-type]
    assert offered(rig) == ["shell"]
    ignored = (response.model_extra or {})["ignored_tools"]
    assert [(entry["type"], entry["param"]) for entry in ignored] == [("web_search", "tools[0]")]
    assert rig.sdk.responses.retrieve(response.id).model_extra["ignored_tools"] == ignored  # type: ignore[index]
    assert [tool.type for tool in response.tools] == ["web_search", "shell"]  # echoed as sent


def test_hosted_tool_is_a_400_under_the_reject_policy(tmp_path: Path) -> None:
    for rig in start_rig(tmp_path, hosted_tools="reject"):
        reply = rig.http.post(
            "/v1/responses", json={"model": "up-model", "input": "hi", "tools": [{"type": "web_search"}]}
        )
        assert reply.status_code == 400
        assert (
            reply.json()["error"]["code"] == "unsupported_value" and reply.json()["error"]["param"] == "tools[0].type"
        )


def test_invalid_agent_tools_are_400s(server: LiveServer) -> None:
    cases = [
        ({"type": "custom", "name": "p", "format": {"type": "grammar", "syntax": "lark"}}, "tools[0].format"),
        ({**AGENTS, "tools": [SPAWN, SPAWN]}, "tools[0].tools[1].name"),  # the second of the two
        ({"type": "namespace", "name": "n", "tools": [{"type": "function", "name": "f", "parameters": {"type": 7}}]},
         "tools[0].tools[0].parameters"),
    ]  # fmt: skip
    for tool, param in cases:
        reply = httpx.post(f"{server.v1}/responses", json={"model": "sim", "input": "x", "tools": [tool]})
        assert reply.status_code == 400, tool
        assert reply.json()["error"]["param"] == param


def test_codex_request_is_served_by_the_simulator(client: openai.OpenAI, server: LiveServer) -> None:
    reply = httpx.post(f"{server.v1}/responses", json={**CODEX_REQUEST, "stream": False}, timeout=30)
    assert reply.status_code == 200, reply.text
    body = reply.json()
    assert body["status"] == "completed"
    assert [tool["type"] for tool in body["tools"]] == [tool["type"] for tool in CODEX_REQUEST["tools"]]
    assert "ignored_tools" not in body  # the simulator runs web_search


def test_simulator_calls_a_custom_tool_with_text_input(client: openai.OpenAI) -> None:
    response = client.responses.create(model="sim", input="Please apply a patch to fix the bug", tools=[PATCH_TOOL],  # type: ignore[list-item]
                                       tool_choice={"type": "custom", "name": "apply_patch"})  # fmt: skip
    (item,) = response.output
    assert item.type == "custom_tool_call" and item.name == "apply_patch"
    assert isinstance(item.input, str) and item.input


def test_simulator_calls_a_namespaced_function(client: openai.OpenAI) -> None:
    response = client.responses.create(model="sim", input="Spawn an agent to lint the code", tools=[AGENTS])  # type: ignore[list-item]
    calls = [item for item in response.output if item.type == "function_call"]
    assert calls and calls[0].name == "spawn_agent" and calls[0].namespace == "agents"


def test_embedded_model_calls_a_namespaced_function_it_is_made_to(client: openai.OpenAI) -> None:
    # An enum keeps the 135M model's arguments short (a free string can run past any token limit).
    spawn = {**SPAWN, "parameters": {"type": "object", "properties": {"task": {"enum": ["lint", "test"]}},
                                     "required": ["task"]}}  # fmt: skip
    response = client.responses.create(model=DEFAULT_MODEL_NAME, input="Lint it", max_output_tokens=60,
                                       tools=[{**AGENTS, "tools": [spawn]}],  # type: ignore[list-item]
                                       tool_choice={"type": "function", "name": "spawn_agent", "namespace": "agents"})  # type: ignore[arg-type]  # fmt: skip
    (item,) = response.output
    assert item.type == "function_call" and (item.name, item.namespace) == ("spawn_agent", "agents")
    assert json.loads(item.arguments)["task"] in ("lint", "test")


CODEX_PATCH_TOOL = next(tool for tool in CODEX_REQUEST["tools"] if tool["type"] == "custom")
PATCH_LINE = re.compile(r"\*\*\* (Begin Patch|End Patch|Add File: .+|Delete File: .+|Update File: .+|Move to: .+|End of File)"
                        r"|[+\- ].*|@@( .+)?")  # fmt: skip


def test_embedded_model_writes_apply_patch_input_under_codex_lark_grammar(client: openai.OpenAI) -> None:
    response = client.responses.create(model=DEFAULT_MODEL_NAME, input="Create hello.txt containing hi",
                                        tools=[CODEX_PATCH_TOOL], tool_choice={"type": "custom", "name": "apply_patch"},  # type: ignore[list-item,arg-type]
                                        max_output_tokens=120, temperature=0)  # fmt: skip
    (item,) = response.output
    assert item.type == "custom_tool_call" and item.name == "apply_patch"
    # The 135M model may not reach "*** End Patch" in its budget, but every line it wrote is one the
    # grammar allows, in the grammar's order: a patch, not prose.
    lines = item.input.split("\n")
    assert lines[0] == "*** Begin Patch" and lines[1].startswith(
        ("*** Add File: ", "*** Delete File: ", "*** Update File: ")
    )
    assert all(PATCH_LINE.fullmatch(line) for line in lines[:-1])
    if response.status == "completed":
        assert item.input.rstrip("\n").endswith("*** End Patch")


def test_embedded_model_is_held_to_a_finite_lark_grammar(client: openai.OpenAI) -> None:
    definition = 'start: "DELETE " NAME ";"\nNAME: /[a-z]{1,8}\\.txt/'
    tool = {"type": "custom", "name": "rm", "format": {"type": "grammar", "syntax": "lark", "definition": definition}}
    response = client.responses.create(model=DEFAULT_MODEL_NAME, input="Remove the notes file", tools=[tool],  # type: ignore[list-item]
                                       tool_choice={"type": "custom", "name": "rm"}, max_output_tokens=40)  # fmt: skip
    (item,) = response.output
    Lark(definition, parser="lalr").parse(item.input)  # raises if it does not parse


def test_embedded_model_is_held_to_a_regex_grammar(client: openai.OpenAI) -> None:
    tool = {
        "type": "custom",
        "name": "code",
        "format": {"type": "grammar", "syntax": "regex", "definition": r"\d{3}-[a-z]{2,5}"},
    }
    response = client.responses.create(model=DEFAULT_MODEL_NAME, input="Give me a code", tools=[tool],  # type: ignore[list-item]
                                       tool_choice={"type": "custom", "name": "code"}, max_output_tokens=20)  # fmt: skip
    assert re.fullmatch(r"\d{3}-[a-z]{2,5}", response.output[0].input)  # type: ignore[union-attr]


def test_a_grammar_the_embedded_model_cannot_enforce_is_a_400(client: openai.OpenAI) -> None:
    tool = {
        "type": "custom",
        "name": "x",
        "format": {"type": "grammar", "syntax": "lark", "definition": 'start: "a"+\n%ignore " "'},
    }
    with pytest.raises(openai.BadRequestError) as refused:
        client.responses.create(model=DEFAULT_MODEL_NAME, input="go", tools=[tool],  # type: ignore[list-item]
                                tool_choice={"type": "custom", "name": "x"})  # type: ignore[arg-type]  # fmt: skip
    assert refused.value.code == "unsupported_grammar" and "%ignore" in refused.value.message


def test_simulator_calls_shell_and_apply_patch_tools(client: openai.OpenAI) -> None:
    shell = client.responses.create(model="sim", input="Run `ls -la` in the shell to list the files",
                                    tools=[{"type": "shell"}])  # type: ignore[list-item]  # fmt: skip
    (call,) = shell.output
    assert call.type == "shell_call" and call.action.commands == ["ls -la"]
    patch = client.responses.create(model="sim", input="Delete the file old.txt", tools=[{"type": "apply_patch"}],  # type: ignore[list-item]
                                    tool_choice={"type": "apply_patch"})  # type: ignore[arg-type]  # fmt: skip
    (edit,) = patch.output
    assert edit.type == "apply_patch_call" and edit.operation.type in ("create_file", "update_file", "delete_file")
