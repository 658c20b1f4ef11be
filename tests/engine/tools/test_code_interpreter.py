"""code_interpreter run by the server for any model, and the Containers API: a scripted Chat
Completions upstream writes the code (or the embedded model, forced by tool_choice), and the real
sandbox runs it. Skipped where no sandbox can run, unless RESPONSA_REQUIRE_SANDBOX is set (CI sets it);
without a sandbox the tool is left out, which is tested everywhere."""

from __future__ import annotations

import asyncio
import base64
import json
import os
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import openai
import pytest

from responsa.backends.llama_cpp import DEFAULT_MODEL_NAME
from responsa.config import ApiKey, Settings
from responsa.external import cgroups_writable, probe_sandbox
from tests.backends.mock_upstream import MockUpstream, Stream, text_chunks
from tests.conftest import LiveServer, StreamReader, serve, served_upstream
from tests.http.test_streaming import parse_frames

WHY_NOT = probe_sandbox()
if WHY_NOT is not None and os.environ.get("RESPONSA_REQUIRE_SANDBOX"):
    pytest.fail(f"RESPONSA_REQUIRE_SANDBOX is set but no sandbox can run: {WHY_NOT}", pytrace=False)
needs_sandbox = pytest.mark.skipif(WHY_NOT is not None, reason=f"no sandbox here: {WHY_NOT}")
OUTPUTS = "code_interpreter_call.outputs"
AUTO = {"type": "code_interpreter", "container": {"type": "auto"}}


@pytest.fixture(scope="module")
def upstream() -> Iterator[MockUpstream]:
    with served_upstream() as mock:
        yield mock


def _settings(upstream: MockUpstream, tmp: Path, **extra: Any) -> Settings:
    return Settings(db_url=f"sqlite:///{tmp / 'r.db'}", embedded=False, upstreams=(upstream.url,), **extra)  # type: ignore[attr-defined]


@pytest.fixture(scope="module")
def server(upstream: MockUpstream, tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveServer]:
    with serve(_settings(upstream, tmp_path_factory.mktemp("code"))) as live:
        yield live


@pytest.fixture
def client(server: LiveServer) -> Iterator[openai.OpenAI]:
    with openai.OpenAI(base_url=server.v1, api_key="x", max_retries=0) as sdk:
        yield sdk


def _code_then_answer(upstream: MockUpstream, code: str, answer: str = "Done.") -> None:
    """The model writes ``code`` in two pieces (so it streams), then answers."""
    arguments = json.dumps({"code": code})
    middle = len(arguments) // 2
    calls = [{"index": 0, "id": "call_0", "type": "function", "function": {"name": "python", "arguments": arguments[:middle]}},
             {"index": 0, "function": {"arguments": arguments[middle:]}}]  # fmt: skip
    chunks = [{"choices": [{"index": 0, "delta": {"tool_calls": [call]}}]} for call in calls]
    upstream.script.append(Stream([*chunks, {"choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}]}]))
    upstream.script.append(Stream(text_chunks(answer)))


def _tool_result(upstream: MockUpstream) -> str:
    return str([message for message in upstream.requests[-1]["messages"] if message["role"] == "tool"][-1]["content"])


@needs_sandbox
def test_the_models_code_runs_and_its_output_is_shown_when_asked(client: openai.OpenAI, upstream: MockUpstream) -> None:
    _code_then_answer(upstream, "total = 6 * 7\nprint('the total is', total)", "The total is 42.")
    reply = client.responses.create(model="up-model", input="What is 6 times 7? Use Python.", tools=[AUTO],  # type: ignore[list-item]
                                    include=[OUTPUTS])  # fmt: skip
    assert [item.type for item in reply.output] == ["code_interpreter_call", "message"]
    call = reply.output[0]
    assert call.type == "code_interpreter_call" and call.status == "completed" and call.id.startswith("ci_")
    assert call.code == "total = 6 * 7\nprint('the total is', total)" and call.container_id.startswith("cntr_")
    assert [(output.type, output.logs) for output in call.outputs or []] == [("logs", "the total is 42\n")]  # type: ignore[union-attr]
    assert "the total is 42" in _tool_result(upstream)
    assert [tool["function"]["name"] for tool in upstream.requests[-2]["tools"]] == ["python"]
    assert client.responses.retrieve(reply.id, include=[OUTPUTS]).model_dump() == reply.model_dump()  # type: ignore[list-item]
    _code_then_answer(upstream, "print(1)")
    plain = client.responses.create(model="up-model", input="Print 1", tools=[AUTO])  # type: ignore[list-item]
    assert plain.output[0].outputs is None  # type: ignore[union-attr]  # only with include, as OpenAI does
    shown = client.responses.retrieve(plain.id, include=[OUTPUTS])  # type: ignore[list-item]  # stored all the same
    assert shown.output[0].outputs[0].logs == "1\n"  # type: ignore[union-attr, index]
    assert client.containers.retrieve(call.container_id).status == "running"
    status = httpx.get(f"{client.base_url}server").json()["hosted_tools"]["code_interpreter"]
    assert status["enabled"] is True and status["container_cgroups"] is cgroups_writable()


@needs_sandbox
def test_the_stream_has_openai_s_events_in_order(server: LiveServer, upstream: MockUpstream) -> None:
    code = 'print("a \\"quoted\\" line")\n'
    _code_then_answer(upstream, code)
    body = {"model": "up-model", "input": "Print a quote", "stream": True, "tools": [AUTO], "include": [OUTPUTS]}
    events = parse_frames(httpx.post(f"{server.v1}/responses", json=body, timeout=60).content)
    ours = [event for event in events if event.get("output_index") == 0]
    kinds = [event["type"] for event in ours]
    deltas = kinds.count("response.code_interpreter_call_code.delta")
    assert deltas >= 1
    assert kinds == ["response.output_item.added", "response.code_interpreter_call.in_progress",
                     *["response.code_interpreter_call_code.delta"] * deltas,
                     "response.code_interpreter_call_code.done", "response.code_interpreter_call.interpreting",
                     "response.code_interpreter_call.completed", "response.output_item.done"]  # fmt: skip
    assert "".join(event["delta"] for event in ours if event["type"].endswith("code.delta")) == code
    assert next(event for event in ours if event["type"].endswith("code.done"))["code"] == code
    added, done = ours[0]["item"], ours[-1]["item"]
    assert added["status"] == "in_progress" and added["container_id"] == done["container_id"]
    assert done["outputs"] == [{"type": "logs", "logs": 'a "quoted" line\n'}]


@needs_sandbox
def test_state_lives_on_in_the_container_across_responses(client: openai.OpenAI, upstream: MockUpstream) -> None:
    _code_then_answer(upstream, "secret = 41")
    first = client.responses.create(model="up-model", input="Remember 41", tools=[AUTO])  # type: ignore[list-item]
    _code_then_answer(upstream, "print(secret + 1)")
    second = client.responses.create(model="up-model", input="Add one", tools=[AUTO], include=[OUTPUTS],  # type: ignore[list-item]
                                     previous_response_id=first.id)  # fmt: skip
    assert second.output[0].container_id == first.output[0].container_id  # type: ignore[union-attr]
    assert second.output[0].outputs[0].logs == "42\n"  # type: ignore[union-attr, index]
    # The model read the earlier call back as a function call and its output.
    replayed = [message for message in upstream.requests[-2]["messages"] if message["role"] == "assistant"]
    assert any("secret = 41" in str(message.get("tool_calls")) for message in replayed)


@needs_sandbox
def test_files_the_code_writes_are_container_files_cited_in_the_answer(
    client: openai.OpenAI, upstream: MockUpstream
) -> None:
    code = "open('/mnt/data/report.csv', 'w').write('city,people\\nParis,2100000\\n')"
    _code_then_answer(upstream, code, "Here it is: [report.csv](sandbox:/mnt/data/report.csv).")
    reply = client.responses.create(model="up-model", input="Write a CSV", tools=[AUTO])  # type: ignore[list-item]
    container_id = reply.output[0].container_id  # type: ignore[union-attr]
    [listed] = client.containers.files.list(container_id).data
    assert (listed.path, listed.source, listed.bytes) == ("/mnt/data/report.csv", "assistant", 26)
    [annotation] = reply.output[1].content[0].annotations  # type: ignore[union-attr]
    assert annotation.type == "container_file_citation"
    assert (annotation.container_id, annotation.file_id, annotation.filename) == (container_id, listed.id, "report.csv")  # type: ignore[union-attr]
    text = reply.output_text
    assert text[annotation.start_index : annotation.end_index] == "sandbox:/mnt/data/report.csv"  # type: ignore[union-attr]
    content = client.containers.files.content.retrieve(listed.id, container_id=container_id)
    assert content.read() == b"city,people\nParis,2100000\n"


@needs_sandbox
def test_a_plot_comes_back_as_an_image_output(client: openai.OpenAI, upstream: MockUpstream) -> None:
    code = ("import pandas as pd\nimport matplotlib.pyplot as plt\n"
            "frame = pd.DataFrame({'x': [1, 2, 3], 'y': [1, 4, 9]})\nframe.plot(x='x', y='y')\nprint(frame.y.sum())")  # fmt: skip
    _code_then_answer(upstream, code)
    reply = client.responses.create(model="up-model", input="Plot squares", tools=[AUTO], include=[OUTPUTS])  # type: ignore[list-item]
    outputs = reply.output[0].outputs or []  # type: ignore[union-attr]
    assert [output.type for output in outputs] == ["logs", "image"]
    assert outputs[0].logs == "14\n"  # type: ignore[union-attr]
    url = outputs[1].url  # type: ignore[union-attr]
    assert url.startswith("data:image/png;base64,")
    assert base64.b64decode(url.split(",", 1)[1]).startswith(b"\x89PNG")
    assert "1 image(s) shown to the user" in _tool_result(upstream)


@needs_sandbox
def test_the_containers_api_and_a_named_container(client: openai.OpenAI, upstream: MockUpstream) -> None:
    uploaded = client.files.create(file=("prices.csv", b"item,price\ntea,3\ncake,5\n"), purpose="user_data")
    container = client.containers.create(name="analysis", file_ids=[uploaded.id], memory_limit="4g",
                                         expires_after={"anchor": "last_active_at", "minutes": 5})  # fmt: skip
    assert (container.name, container.status, container.memory_limit) == ("analysis", "running", "4g")
    assert container.expires_after.minutes == 5 and container.id.startswith("cntr_")  # type: ignore[union-attr]
    assert client.containers.retrieve(container.id).model_dump() == container.model_dump()
    assert container.id in [found.id for found in client.containers.list(name="analysis").data]
    added = client.containers.files.create(container.id, file=("notes.txt", b"bring milk"))
    assert (added.path, added.source, added.bytes) == ("/mnt/data/notes.txt", "user", 10)
    paths = sorted(file.path for file in client.containers.files.list(container.id).data)
    assert paths == ["/mnt/data/notes.txt", "/mnt/data/prices.csv"]
    code = "import pandas as pd\nprint(pd.read_csv('/mnt/data/prices.csv').price.sum(), open('/mnt/data/notes.txt').read())"
    _code_then_answer(upstream, code)
    tool = {"type": "code_interpreter", "container": container.id}
    reply = client.responses.create(model="up-model", input="Sum the prices", tools=[tool], include=[OUTPUTS])  # type: ignore[list-item]
    assert reply.output[0].container_id == container.id  # type: ignore[union-attr]
    assert reply.output[0].outputs[0].logs == "8 bring milk\n"  # type: ignore[union-attr, index]
    client.containers.files.delete(added.id, container_id=container.id)
    assert [file.path for file in client.containers.files.list(container.id).data] == ["/mnt/data/prices.csv"]
    client.containers.delete(container.id)
    with pytest.raises(openai.NotFoundError):
        client.containers.retrieve(container.id)
    with pytest.raises(openai.NotFoundError):
        client.responses.create(model="up-model", input="again", tools=[tool])  # type: ignore[list-item]


@needs_sandbox
def test_links_the_code_makes_never_reach_the_hosts_files(
    client: openai.OpenAI, upstream: MockUpstream, tmp_path: Path
) -> None:
    """The code can name any host path in a link; the server never follows one, to read or to write."""
    victim = tmp_path / "victim.txt"
    victim.write_text("host data")
    code = (f"import os\nos.symlink({str(victim)!r}, '/mnt/data/leak.txt')\n"
            f"os.symlink({str(tmp_path)!r}, '/mnt/data/dir')\nos.symlink({str(victim)!r}, '/mnt/data/upload.txt')")  # fmt: skip
    _code_then_answer(upstream, code)
    reply = client.responses.create(model="up-model", input="links", tools=[AUTO])  # type: ignore[list-item]
    container_id = reply.output[0].container_id  # type: ignore[union-attr]
    assert client.containers.files.list(container_id).data == []  # links are not files
    client.containers.files.create(container_id, file=("upload.txt", b"overwritten?"))
    assert victim.read_text() == "host data"  # the upload replaced the link, not the file behind it
    file_id = client.containers.files.list(container_id).data[0].id
    assert client.containers.files.content.retrieve(file_id, container_id=container_id).read() == b"overwritten?"


def test_containers_are_per_tenant(upstream: MockUpstream, tmp_path: Path) -> None:
    keys = (ApiKey("sk-alice", "alice"), ApiKey("sk-bob", "bob"))
    with serve(_settings(upstream, tmp_path, api_keys=keys)) as live:
        alice = openai.OpenAI(base_url=live.v1, api_key="sk-alice", max_retries=0)
        bob = openai.OpenAI(base_url=live.v1, api_key="sk-bob", max_retries=0)
        container = alice.containers.create(name="mine")
        added = alice.containers.files.create(container.id, file=("a.txt", b"alice's"))
        assert [found.id for found in alice.containers.list().data] == [container.id]
        assert bob.containers.list().data == []
        for attempt in (lambda: bob.containers.retrieve(container.id),
                        lambda: bob.containers.files.list(container.id),
                        lambda: bob.containers.files.content.retrieve(added.id, container_id=container.id),
                        lambda: bob.containers.delete(container.id)):  # fmt: skip
            with pytest.raises(openai.NotFoundError):
                attempt()
        assert alice.containers.retrieve(container.id).status == "running"


@pytest.mark.parametrize(
    ("body", "param"),
    [
        (
            {"name": "x", "network_policy": {"type": "allowlist", "allowed_domains": ["http://a.com"]}},
            "network_policy.allowed_domains",
        ),
        ({"name": "x", "network_policy": {"type": "everything"}}, "network_policy.type"),
        ({"name": "x", "memory_limit": "2g"}, "memory_limit"),
        ({"name": "x", "file_ids": ["file-missing"]}, None),
        ({}, "name"),
    ],
)
def test_bad_containers_are_refused_clearly(server: LiveServer, body: dict[str, Any], param: str | None) -> None:
    reply = httpx.post(f"{server.v1}/containers", json=body)
    assert reply.status_code in (400, 404) and reply.json()["error"]["message"]
    if param is not None:
        assert reply.json()["error"]["param"] == param


@needs_sandbox
def test_files_an_auto_container_cannot_have_are_refused_before_the_model_runs(
    server: LiveServer, upstream: MockUpstream
) -> None:
    asked = len(upstream.requests)
    tool = {"type": "code_interpreter", "container": {"type": "auto", "file_ids": ["file-missing"]}}
    reply = httpx.post(f"{server.v1}/responses", json={"model": "up-model", "input": "hi", "tools": [tool]})
    assert reply.status_code == 404 and "file-missing" in reply.json()["error"]["message"]
    tool = {"type": "code_interpreter", "container": {"type": "auto", "network_policy": {"type": "allowlist"}}}
    reply = httpx.post(f"{server.v1}/responses", json={"model": "up-model", "input": "hi", "tools": [tool]})
    assert reply.status_code == 400
    assert reply.json()["error"]["param"] == "tools[0].container.network_policy.allowed_domains"
    assert len(upstream.requests) == asked


def test_without_a_sandbox_the_tool_is_left_out_and_the_server_says_why(upstream: MockUpstream, tmp_path: Path) -> None:
    with serve(_settings(upstream, tmp_path, code_interpreter=False)) as live:
        status = httpx.get(f"{live.v1}/server").json()["hosted_tools"]["code_interpreter"]
        assert status["enabled"] is False and "off" in status["detail"]
        upstream.script.append(Stream(text_chunks("No Python here.")))
        reply = httpx.post(f"{live.v1}/responses", json={"model": "up-model", "input": "2+2?", "tools": [AUTO]}).json()
    assert [entry["type"] for entry in reply["ignored_tools"]] == ["code_interpreter"]
    assert [item["type"] for item in reply["output"]] == ["message"]
    assert "tools" not in upstream.requests[-1]


@pytest.fixture(scope="module")
def embedded(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveServer]:
    with serve(Settings(db_url=f"sqlite:///{tmp_path_factory.mktemp('embedded') / 'e.db'}")) as live:
        yield live


@needs_sandbox
def test_the_embedded_model_runs_code_when_forced(embedded: LiveServer) -> None:
    """The packaged 135M model, held to the call by grammar (tool_choice): whatever it writes really runs."""
    with openai.OpenAI(base_url=embedded.v1, api_key="x", max_retries=0) as client:
        reply = client.responses.create(model=DEFAULT_MODEL_NAME, input="Sum the numbers 1 to 10.",
                                        tools=[AUTO], tool_choice={"type": "code_interpreter"},  # type: ignore[list-item, arg-type]
                                        include=[OUTPUTS], max_output_tokens=200, temperature=0)  # fmt: skip
    call = reply.output[0]
    assert call.type == "code_interpreter_call" and call.status == "completed"
    assert call.code and call.container_id.startswith("cntr_") and call.outputs is not None


@needs_sandbox
def test_an_agents_sdk_agent_with_the_hosted_tool_runs_unchanged(embedded: LiveServer) -> None:
    """The Agents SDK's own CodeInterpreterTool, as written for OpenAI, on the embedded model."""
    os.environ.setdefault("OPENAI_AGENTS_DISABLE_TRACING", "1")
    import agents

    agents.set_tracing_disabled(True)

    async def run() -> Any:
        async with openai.AsyncOpenAI(base_url=embedded.v1, api_key="-") as sdk:
            agent = agents.Agent(
                name="analyst",
                tools=[
                    agents.CodeInterpreterTool(tool_config={"type": "code_interpreter", "container": {"type": "auto"}})
                ],
                model=agents.OpenAIResponsesModel(model=DEFAULT_MODEL_NAME, openai_client=sdk),
                model_settings=agents.ModelSettings(tool_choice="code_interpreter", temperature=0, max_tokens=600),
            )
            return await agents.Runner.run(agent, "Sum the numbers 1 to 10.", max_turns=2)

    result = asyncio.run(run())
    [call] = [item.raw_item for item in result.new_items if item.type == "tool_call_item"]
    assert call.type == "code_interpreter_call" and call.status == "completed"  # type: ignore[union-attr]
    assert call.container_id.startswith("cntr_") and call.code  # type: ignore[union-attr]
    assert isinstance(result.final_output, str)


@needs_sandbox
def test_a_cancel_stops_code_that_is_running(server: LiveServer, upstream: MockUpstream) -> None:
    """The call is cut at once (not after the code's minute); the container's Python starts over."""
    _code_then_answer(upstream, "import time\ntime.sleep(60)\nprint('finished')")
    body = {"model": "up-model", "input": "Wait a minute", "stream": True, "tools": [AUTO]}
    reader = StreamReader(f"{server.v1}/responses", body, after=1)
    assert reader.ready.wait(10)
    response_id = reader.events[0]["response"]["id"]
    with httpx.Client(base_url=server.v1, timeout=20) as http:
        deadline = time.monotonic() + 20
        while not any(event["type"] == "response.code_interpreter_call.interpreting" for event in reader.events):
            assert time.monotonic() < deadline
            time.sleep(0.02)
        cancelled = http.post(f"/responses/{response_id}/cancel").json()
        assert cancelled["status"] == "cancelled"
        assert reader.join(10)
        [call] = [item for item in cancelled["output"] if item["type"] == "code_interpreter_call"]
        assert call["status"] == "incomplete"
        done = [event for event in reader.events if event["type"] == "response.output_item.done"]
        assert done[-1]["item"]["status"] == "incomplete"
    assert len(upstream.requests) >= 1 and upstream.script  # the answer after the code was never asked for
    upstream.script.clear()


@needs_sandbox
def test_a_container_reached_from_another_process_says_its_python_restarted(
    upstream: MockUpstream, tmp_path: Path
) -> None:
    """Processes on one store: two workers of one server (one containers directory) and a replica on
    another machine (a directory of its own). Code reaching the container through another process
    runs in a fresh Python next to the same files and says so; on the other machine the files are
    brought back from the store first, and what its code writes comes back to the first machine."""
    here = _settings(upstream, tmp_path, containers_dir=tmp_path / "containers")
    there = _settings(upstream, tmp_path, containers_dir=tmp_path / "elsewhere")
    with serve(here) as one, serve(here) as two, serve(there) as far:
        a, b, c = (openai.OpenAI(base_url=live.v1, api_key="x", max_retries=0) for live in (one, two, far))
        container = a.containers.create(name="shared")
        tool = {"type": "code_interpreter", "container": container.id}

        def run(client: openai.OpenAI, code: str) -> str:
            _code_then_answer(upstream, code)
            reply = client.responses.create(model="up-model", input="Run it", tools=[tool], include=[OUTPUTS])  # type: ignore[list-item]
            assert reply.output[0].status == "completed"  # type: ignore[union-attr]
            return str(reply.output[0].outputs[0].logs)  # type: ignore[union-attr, index]

        assert run(a, "secret = 41\nopen('/mnt/data/kept.txt', 'w').write('kept')\nprint(secret)") == "41\n"
        logs = run(b, "print(open('/mnt/data/kept.txt').read())\nprint(secret)")
        assert logs.startswith("[Python restarted: ") and "kept\n" in logs and "NameError" in logs
        listed = c.containers.files.list(container.id).data
        assert [f.path for f in listed] == ["/mnt/data/kept.txt"]
        assert c.containers.files.content.retrieve(listed[0].id, container_id=container.id).read() == b"kept"
        moved = run(c, "print(open('/mnt/data/kept.txt').read())\n_ = open('/mnt/data/far.txt', 'w').write('from far')")
        assert moved.startswith("[Python restarted: ") and moved.endswith("kept\n")
        back = run(a, "print(open('/mnt/data/far.txt').read(), open('/mnt/data/kept.txt').read())")
        assert back.startswith("[Python restarted: ") and back.endswith("from far kept\n")
        assert sorted(f.path for f in b.containers.files.list(container.id).data) == ["/mnt/data/far.txt",
                                                                                     "/mnt/data/kept.txt"]  # fmt: skip
        assert run(a, "secret = 7\nprint(secret)") == "7\n"
