"""The hosted shell (a ``shell`` tool in a container), run by the server for any model, and the client's
shell calls marked ``local``: a scripted model writes the commands (the simulator cannot be told which),
the real sandbox runs them. Skipped where no sandbox can run, unless RESPONSA_REQUIRE_SANDBOX is set
(CI sets it); without one a hosted shell is a 400, tested everywhere."""

from __future__ import annotations

import asyncio
import json
import os
import time
from pathlib import Path
from typing import Any

import httpx
import openai
import pytest

from responsa.backends.llama_cpp import DEFAULT_MODEL_NAME
from responsa.config import Settings
from responsa.external import probe_sandbox
from tests.backends.mock_upstream import MockUpstream, Stream, call_turn, text_chunks
from tests.conftest import LiveServer, StreamReader, serve_app
from tests.http.test_streaming import parse_frames
from tests.in_process import InProcess, in_process
from tests.scripted import ScriptedBackend, call, text

WHY_NOT = probe_sandbox()
if WHY_NOT is not None and os.environ.get("RESPONSA_REQUIRE_SANDBOX"):
    pytest.fail(f"RESPONSA_REQUIRE_SANDBOX is set but no sandbox can run: {WHY_NOT}", pytrace=False)
needs_sandbox = pytest.mark.skipif(WHY_NOT is not None, reason=f"no sandbox here: {WHY_NOT}")
AUTO = {"type": "shell", "environment": {"type": "container_auto"}}


def _commands(model: ScriptedBackend, *commands: str, answer: str = "Done.", **action: Any) -> None:
    model.turns.append(call("shell", json.dumps({"commands": list(commands), **action})))
    model.turns.append(text(answer))


def _tool_result(model: ScriptedBackend) -> str:
    """What the model read back as the shell's result, in its last request."""
    outputs = [item for item in model.requests[-1].items if getattr(item, "type", None) == "function_call_output"]
    return str(outputs[-1].output)


@needs_sandbox
def test_each_command_runs_in_a_container_and_the_model_reads_its_output(
    scripted_module: tuple[InProcess, ScriptedBackend],
) -> None:
    served, model = scripted_module
    _commands(model, "echo hello; echo oops >&2", "ls /no/such/place", answer="It said hello.")
    reply = served.sdk.responses.create(model="scripted", input="Say hello in the shell.", tools=[AUTO])  # type: ignore[list-item]
    assert [item.type for item in reply.output] == ["shell_call", "shell_call_output", "message"]
    shell_call, output = reply.output[0], reply.output[1]
    assert shell_call.type == "shell_call" and output.type == "shell_call_output"
    assert shell_call.status == "completed" and shell_call.action.commands == [
        "echo hello; echo oops >&2",
        "ls /no/such/place",
    ]
    assert shell_call.environment is not None and shell_call.environment.type == "container_reference"
    container_id = shell_call.environment.container_id  # type: ignore[union-attr]
    assert container_id.startswith("cntr_") and served.sdk.containers.retrieve(container_id).status == "running"
    assert output.call_id == shell_call.call_id and output.status == "completed"
    first, second = output.output
    assert (first.stdout, first.stderr, first.outcome.type, first.outcome.exit_code) == ("hello\n", "oops\n", "exit", 0)  # type: ignore[union-attr]
    assert second.outcome.type == "exit" and second.outcome.exit_code != 0 and "No such file" in second.stderr  # type: ignore[union-attr]
    assert "hello" in _tool_result(model) and "No such file" in _tool_result(model)
    assert reply.output_text == "It said hello."
    assert [tool.name for tool in model.requests[-2].tools] == ["shell"]
    assert served.sdk.responses.retrieve(reply.id).model_dump() == reply.model_dump()


@needs_sandbox
def test_the_stream_has_openai_s_shell_events_in_order(scripted_module: tuple[InProcess, ScriptedBackend]) -> None:
    served, model = scripted_module
    _commands(model, "printf one", "printf two >&2")
    body = {"model": "scripted", "input": "Run two commands.", "stream": True, "tools": [AUTO]}
    events = parse_frames(served.http.post("/v1/responses", json=body).content)
    call_events = [event["type"] for event in events if event.get("output_index") == 0]
    assert call_events == ["response.output_item.added",
                           *["response.shell_call_command.added", "response.shell_call_command.delta",
                             "response.shell_call_command.done"] * 2,
                           "response.output_item.done"]  # fmt: skip
    commands = [event for event in events if event["type"] == "response.shell_call_command.done"]
    assert [(event["command_index"], event["command"]) for event in commands] == [
        (0, "printf one"),
        (1, "printf two >&2"),
    ]
    output_events = [event for event in events if event.get("output_index") == 1]
    assert [event["type"] for event in output_events] == ["response.output_item.added",
                                                          *["response.shell_call_output_content.delta",
                                                            "response.shell_call_output_content.done"] * 2,
                                                          "response.output_item.done"]  # fmt: skip
    item_id = output_events[0]["item"]["id"]
    assert output_events[0]["item"]["status"] == "in_progress" and item_id.startswith("sho_")
    deltas = [event for event in output_events if event["type"].endswith("content.delta")]
    assert [event["delta"] for event in deltas] == [{"stdout": "one", "stderr": ""}, {"stdout": "", "stderr": "two"}]
    assert {event["item_id"] for event in output_events[1:-1]} == {item_id}
    done = output_events[-1]["item"]
    assert [entry["outcome"] for entry in done["output"]] == [{"type": "exit", "exit_code": 0}] * 2
    assert events[-1]["type"] == "response.completed"
    assert [item["type"] for item in events[-1]["response"]["output"]] == ["shell_call", "shell_call_output", "message"]


@needs_sandbox
def test_files_the_commands_write_are_container_files_cited_and_kept_for_the_next_turn(
    scripted_module: tuple[InProcess, ScriptedBackend],
) -> None:
    served, model = scripted_module
    _commands(model, "echo 'a,b' > /mnt/data/table.csv", answer="Here: sandbox:/mnt/data/table.csv")
    first = served.sdk.responses.create(model="scripted", input="Make a CSV.", tools=[AUTO])  # type: ignore[list-item]
    container_id = first.output[0].environment.container_id  # type: ignore[union-attr]
    [annotation] = first.output[2].content[0].annotations  # type: ignore[union-attr]
    assert annotation.type == "container_file_citation" and annotation.container_id == container_id  # type: ignore[union-attr]
    [listed] = served.sdk.containers.files.list(container_id).data
    assert listed.path == "/mnt/data/table.csv" and listed.source == "assistant" and annotation.file_id == listed.id  # type: ignore[union-attr]
    assert served.sdk.containers.files.content.retrieve(listed.id, container_id=container_id).read() == b"a,b\n"
    _commands(model, "cat table.csv")
    second = served.sdk.responses.create(
        model="scripted", input="Show it.", tools=[AUTO], previous_response_id=first.id
    )  # type: ignore[list-item]
    assert second.output[0].environment.container_id == container_id  # type: ignore[union-attr]  # the context's container
    assert second.output[1].output[0].stdout == "a,b\n"  # type: ignore[union-attr]


@needs_sandbox
def test_a_referenced_container_gets_what_the_commands_write(
    scripted_module: tuple[InProcess, ScriptedBackend],
) -> None:
    served, model = scripted_module
    container = served.sdk.containers.create(name="work")
    _commands(model, "mkdir -p out && echo done > out/result.txt")
    tool = {"type": "shell", "environment": {"type": "container_reference", "container_id": container.id}}
    reply = served.sdk.responses.create(model="scripted", input="Write a result.", tools=[tool])  # type: ignore[list-item]
    assert reply.output[0].environment.container_id == container.id  # type: ignore[union-attr]
    assert [file.path for file in served.sdk.containers.files.list(container.id).data] == ["/mnt/data/out/result.txt"]


@needs_sandbox
def test_a_command_past_its_time_is_a_timeout_and_output_is_cut_where_asked(
    scripted_module: tuple[InProcess, ScriptedBackend],
) -> None:
    served, model = scripted_module
    _commands(model, "echo started; sleep 20", "yes | head -c 5000", timeout_ms=500, max_output_length=100)
    reply = served.sdk.responses.create(model="scripted", input="Wait, then print a lot.", tools=[AUTO])  # type: ignore[list-item]
    slow, loud = reply.output[1].output  # type: ignore[union-attr]
    assert slow.outcome.type == "timeout" and slow.stdout == "started\n"
    assert loud.outcome.exit_code == 0 and loud.stdout.startswith("y\n" * 50) and "truncated" in loud.stdout  # type: ignore[union-attr]
    assert len(loud.stdout) < 200 and reply.output[1].max_output_length == 100  # type: ignore[union-attr]


@needs_sandbox
def test_the_commands_cannot_reach_the_network_or_the_hosts_files(
    scripted_module: tuple[InProcess, ScriptedBackend],
) -> None:
    served, model = scripted_module
    secret = Path(__file__).resolve()
    _commands(
        model,
        f"cat {secret}",
        "cat /etc/hostname; ls /root",
        "python3 -c \"import socket; socket.create_connection(('127.0.0.1', 80), 2)\"",
    )
    reply = served.sdk.responses.create(model="scripted", input="Look around.", tools=[AUTO])  # type: ignore[list-item]
    host_file, elsewhere, network = reply.output[1].output  # type: ignore[union-attr]
    assert host_file.outcome.exit_code != 0 and "No such file" in host_file.stderr  # type: ignore[union-attr]
    assert "root" not in elsewhere.stdout
    assert network.outcome.exit_code != 0 and ("unreachable" in network.stderr or "refused" in network.stderr)  # type: ignore[union-attr]


def test_the_clients_shell_calls_say_they_are_local(scripted_module: tuple[InProcess, ScriptedBackend]) -> None:
    served, model = scripted_module
    for tool in ({"type": "shell"}, {"type": "shell", "environment": {"type": "local"}}):
        model.turns.append(call("shell", json.dumps({"commands": ["ls"]})))
        reply = served.sdk.responses.create(model="scripted", input="List files.", tools=[tool])  # type: ignore[list-item]
        [shell_call] = reply.output
        assert shell_call.type == "shell_call" and shell_call.environment is not None
        assert shell_call.environment.type == "local" and shell_call.action.commands == ["ls"]


def test_a_hosted_shell_without_a_sandbox_is_refused_naming_it(tmp_path: Path) -> None:
    settings = Settings(db_url=f"sqlite:///{tmp_path / 'r.db'}", embedded=False, code_interpreter=False)
    with in_process(settings, backends=[ScriptedBackend()]) as served:
        reply = served.http.post("/v1/responses", json={"model": "scripted", "input": "hi", "tools": [AUTO]})
        assert reply.status_code == 400
        assert reply.json()["error"]["param"] == "tools[0].environment.type"
        assert "hosted shell cannot run" in reply.json()["error"]["message"]
        assert served.http.get("/v1/server").json()["hosted_tools"]["shell"]["enabled"] is False


@pytest.mark.parametrize(
    ("environment", "status", "param"),
    [
        ({"type": "container_reference", "container_id": "cntr_missing"}, 404, "tools[0].environment.container_id"),
        (
            {"type": "container_auto", "network_policy": {"type": "open"}},
            400,
            "tools[0].environment.network_policy.type",
        ),
        (
            {"type": "container_auto", "network_policy": {"type": "allowlist", "allowed_domains": ["https://x.org/"]}},
            400,
            "tools[0].environment.network_policy.allowed_domains",
        ),
        (
            {
                "type": "container_auto",
                "network_policy": {
                    "type": "allowlist",
                    "allowed_domains": ["x.org"],
                    "domain_secrets": [{"domain": "x.org", "name": "K", "value": "v"}],
                },
            },
            400,
            "tools[0].environment.network_policy.domain_secrets",
        ),
        ({"type": "container_auto", "file_ids": ["file-missing"]}, 404, None),
        ({"type": "container_cloud"}, 400, None),
    ],
)
def test_bad_environments_are_refused_before_the_model_runs(
    scripted_module: tuple[InProcess, ScriptedBackend], environment: dict[str, Any], status: int, param: str | None
) -> None:
    served, model = scripted_module
    asked = len(model.requests)
    reply = served.http.post("/v1/responses", json={"model": "scripted", "input": "hi",
                                                    "tools": [{"type": "shell", "environment": environment}]})  # fmt: skip
    if WHY_NOT is not None and status == 404:
        status, param = 400, "tools[0].environment.type"  # no sandbox: refused before the container is looked up
    assert reply.status_code == status, reply.text
    if param is not None:
        assert reply.json()["error"]["param"] == param
    assert len(model.requests) == asked


def _upstream_commands(upstream: MockUpstream, *commands: str, answer: str = "Done.") -> None:
    upstream.script += [call_turn("shell", {"commands": list(commands)}), Stream(text_chunks(answer))]


def _run_agent(base_url: str, model: str, environment: dict[str, Any], ask: str, **settings: Any) -> Any:
    """The Agents SDK's own ShellTool with a hosted environment, as written for OpenAI."""
    os.environ.setdefault("OPENAI_AGENTS_DISABLE_TRACING", "1")
    import agents

    agents.set_tracing_disabled(True)

    async def run() -> Any:
        async with openai.AsyncOpenAI(base_url=base_url, api_key="-", max_retries=0) as sdk:
            agent = agents.Agent(
                name="operator",
                tools=[agents.ShellTool(environment=environment)],  # type: ignore[arg-type]
                model=agents.OpenAIResponsesModel(model=model, openai_client=sdk),
                model_settings=agents.ModelSettings(**settings),
            )
            return await agents.Runner.run(agent, ask, max_turns=3)

    return asyncio.run(run())


@needs_sandbox
def test_an_agents_sdk_shell_tool_in_an_auto_container_gets_the_servers_output(
    upstream_live: LiveServer, upstream: MockUpstream
) -> None:
    """The SDK skips local execution for a hosted shell and waits for the server's output: it gets it."""
    _upstream_commands(upstream, "echo $((6 * 7))", answer="The answer is 42.")
    result = _run_agent(upstream_live.v1, "up-model", {"type": "container_auto"}, "Compute 6*7 in the shell.")
    assert result.final_output == "The answer is 42."
    [shell_call] = [item.raw_item for item in result.new_items if item.type == "tool_call_item"]
    [output] = [item.raw_item for item in result.new_items if item.type == "tool_call_output_item"]
    shell_call, output = dict(shell_call), output if isinstance(output, dict) else output.model_dump()
    assert shell_call["environment"]["type"] == "container_reference"
    assert output["type"] == "shell_call_output" and output["output"][0]["stdout"] == "42\n"
    assert "42" in str(upstream.requests[-1]["messages"])


@needs_sandbox
def test_an_agents_sdk_shell_tool_in_a_referenced_container_writes_its_files(
    upstream_live: LiveServer, upstream: MockUpstream
) -> None:
    with openai.OpenAI(base_url=upstream_live.v1, api_key="-", max_retries=0) as client:
        container = client.containers.create(name="agent-work")
        _upstream_commands(upstream, "echo notes > notes.txt", answer="Saved.")
        environment = {"type": "container_reference", "container_id": container.id}
        result = _run_agent(upstream_live.v1, "up-model", environment, "Save notes.")
        assert result.final_output == "Saved."
        [file] = client.containers.files.list(container.id).data
        assert file.path == "/mnt/data/notes.txt"
        assert client.containers.files.content.retrieve(file.id, container_id=container.id).read() == b"notes\n"


@needs_sandbox
@pytest.mark.parametrize("model", ["sim", DEFAULT_MODEL_NAME])
def test_the_simulator_and_the_embedded_model_run_commands_when_forced(upstream_live: LiveServer, model: str) -> None:
    """Whatever the simulator or the packaged 135M model writes, held to the call, really runs (a call
    holds at most 16 commands, so a small model's sampled list ends)."""
    with openai.OpenAI(base_url=upstream_live.v1, api_key="-", max_retries=0) as client:
        reply = client.responses.create(model=model, input="Run the command: ls", tools=[AUTO],  # type: ignore[list-item]
                                        tool_choice={"type": "shell"}, max_output_tokens=300, temperature=0)  # type: ignore[arg-type]  # fmt: skip
    assert [item.type for item in reply.output][:2] == ["shell_call", "shell_call_output"], model
    shell_call, output = reply.output[0], reply.output[1]
    assert shell_call.environment.type == "container_reference"  # type: ignore[union-attr]
    assert shell_call.action.commands and len(output.output) == len(shell_call.action.commands) <= 16  # type: ignore[union-attr]
    assert all(entry.outcome.type in ("exit", "timeout") for entry in output.output)  # type: ignore[union-attr]


@needs_sandbox
def test_an_agents_sdk_shell_tool_with_a_skill_reads_it_in_its_container(
    upstream_live: LiveServer, upstream: MockUpstream
) -> None:
    with openai.OpenAI(base_url=upstream_live.v1, api_key="-", max_retries=0) as client:
        manifest = b"---\nname: greeter\ndescription: Greets people by name.\n---\nSay: hello, NAME.\n"
        skill = client.skills.create(files=[("greeter/SKILL.md", manifest)])
    _upstream_commands(upstream, "cat /mnt/skills/greeter/SKILL.md", answer="hello, Ada.")
    environment = {"type": "container_auto", "skills": [{"type": "skill_reference", "skill_id": skill.id}]}
    result = _run_agent(upstream_live.v1, "up-model", environment, "Greet Ada.")
    assert result.final_output == "hello, Ada."
    [output] = [item.raw_item for item in result.new_items if item.type == "tool_call_output_item"]
    output = output if isinstance(output, dict) else output.model_dump()
    assert output["output"][0]["stdout"] == manifest.decode()
    assert "greeter: Greets people by name." in upstream.requests[-2]["tools"][0]["function"]["description"]


async def _page(scope: dict[str, Any], receive: Any, send: Any) -> None:
    """A page on loopback, standing for an allowed site."""
    if scope["type"] != "http":
        return
    await send({"type": "http.response.start", "status": 200, "headers": [(b"content-type", b"text/plain")]})
    await send({"type": "http.response.body", "body": b"hello from an allowed host"})


@needs_sandbox
def test_an_allowlist_reaches_its_hosts_through_the_proxy_and_nothing_else(
    scripted_module: tuple[InProcess, ScriptedBackend],
) -> None:
    """The container's only way out is the server's proxy: an allowed host (loopback, reachable without
    API keys) answers; a host not listed, a link-local (metadata) address listed, and a direct
    connection without the proxy are each refused."""
    served, model = scripted_module
    with serve_app(_page) as site:
        port = site.url.rsplit(":", 1)[1]
        fetch = 'python3 -c "import sys, urllib.request; print(urllib.request.urlopen(sys.argv[1], timeout=5).read().decode())" '
        direct = f"python3 -c \"import socket; socket.create_connection(('127.0.0.1', {port}), 3)\""
        _commands(model, fetch + f"http://localhost:{port}/", fetch + f"http://127.0.0.1:{port}/",
                  fetch + "http://169.254.169.254/latest/meta-data/", direct)  # fmt: skip
        policy = {"type": "allowlist", "allowed_domains": ["localhost", "169.254.169.254"]}
        tool = {"type": "shell", "environment": {"type": "container_auto", "network_policy": policy}}
        reply = served.sdk.responses.create(model="scripted", input="Fetch the page.", tools=[tool])  # type: ignore[list-item]
    allowed, unlisted, metadata, unproxied = reply.output[1].output  # type: ignore[union-attr]
    assert allowed.outcome.exit_code == 0 and allowed.stdout == "hello from an allowed host\n"  # type: ignore[union-attr]
    assert unlisted.outcome.exit_code != 0 and "403" in unlisted.stderr  # type: ignore[union-attr]
    assert metadata.outcome.exit_code != 0 and "403" in metadata.stderr  # type: ignore[union-attr]
    assert unproxied.outcome.exit_code != 0  # type: ignore[union-attr]
    container = served.sdk.containers.retrieve(reply.output[0].environment.container_id)  # type: ignore[union-attr]
    assert container.network_policy.type == "allowlist"  # type: ignore[union-attr]


@needs_sandbox
def test_a_cancel_stops_a_running_command_and_ends_its_output_incomplete(
    upstream_live: LiveServer, upstream: MockUpstream
) -> None:
    """The command is cut at once; the call stays as written, its output item ends ``incomplete``, and
    the stored response says the same as the stream did."""
    _upstream_commands(upstream, "echo begun; sleep 25; echo finished")
    body = {"model": "up-model", "input": "Wait.", "stream": True, "tools": [AUTO]}
    reader = StreamReader(f"{upstream_live.v1}/responses", body, after=1)
    assert reader.ready.wait(10)
    response_id = reader.events[0]["response"]["id"]
    deadline = time.monotonic() + 20
    while not any(event["type"] == "response.output_item.added" and event["item"]["type"] == "shell_call_output"
                  for event in reader.events):  # fmt: skip
        assert time.monotonic() < deadline
        time.sleep(0.02)
    with httpx.Client(base_url=upstream_live.v1, timeout=20) as http:
        cancelled = http.post(f"/responses/{response_id}/cancel").json()
        assert reader.join(10)
        stored = http.get(f"/responses/{response_id}").json()
    assert cancelled["status"] == stored["status"] == "cancelled"
    kinds = {item["type"]: item["status"] for item in stored["output"]}
    assert kinds == {"shell_call": "completed", "shell_call_output": "incomplete"}
    done = [event["item"] for event in reader.events if event["type"] == "response.output_item.done"]
    assert [(item["type"], item["status"]) for item in done][-1] == ("shell_call_output", "incomplete")
    upstream.script.clear()
