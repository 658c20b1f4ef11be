"""Tool kinds from plug-ins: a distribution with a ``responsa.tool_kinds`` entry point (tests/engine/
echo_kind.py, installed into a folder on PYTHONPATH as pip would) adds a tool type to a live
``responsa serve``: offered to the model, its call returned as the kind's own item, the client's
output read back into the next turn; ``tool_choice: {"type": "echo"}`` forces it. A kind the server
runs (tests/engine/tally_kind.py) is made at start-up with its own service and answers calls on the
server. A kind taking a type another kind has, or one that cannot be loaded, stops the start."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import httpx
import pytest

from responsa.engine.tools import ToolRegistry, client_kinds
from tests.conftest import start_serve
from tests.engine.echo_kind import EchoKind


def _install(site: Path, module: str = "echo_kind", entry: str = "echo = echo_kind:KIND") -> None:
    """What ``pip install`` leaves: the module, and its dist-info with the entry point."""
    shutil.copy(Path(__file__).with_name(f"{module}.py"), site / f"{module}.py")
    info = site / f"{module}-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {module.replace('_', '-')}\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text(f"[responsa.tool_kinds]\n{entry}\n")


def test_a_plugin_kind_is_offered_called_and_answered(tmp_path: Path) -> None:
    site = tmp_path / "site"
    site.mkdir()
    _install(site)
    process, url = start_serve("--no-embedded", "--db", f"sqlite:///{tmp_path}/db.sqlite", log=tmp_path / "serve.log",
                               env={"PYTHONPATH": str(site)})  # fmt: skip
    try:
        with httpx.Client(base_url=f"{url}/v1", timeout=30) as http:
            tools = [{"type": "echo", "description": "Echo a phrase back to the user"}]
            first = http.post(
                "/responses", json={"model": "sim", "input": "Please echo the phrase back", "tools": tools}
            )
            assert first.status_code == 200, first.text
            [call] = first.json()["output"]
            assert call["type"] == "echo_call" and call["status"] == "completed" and isinstance(call["text"], str)
            answer = {"type": "echo_call_output", "call_id": call["call_id"], "output": "a phrase, echoed"}
            second = http.post("/responses", json={"model": "sim", "previous_response_id": first.json()["id"],
                                                   "input": [answer], "tools": tools})  # fmt: skip
            assert second.status_code == 200, second.text
            forced = http.post("/responses", json={"model": "sim", "input": "What time is it?", "tools": tools,
                                                   "tool_choice": {"type": "echo"}})  # fmt: skip
            assert forced.status_code == 200, forced.text  # a choice names a plug-in kind by its type
            assert [item["type"] for item in forced.json()["output"]] == ["echo_call"]
            answered = second.json()["output"][-1]["content"][0]["text"]
            assert f'echo({{"text": "{call["text"]}"}}) returned: a phrase, echoed' in answered  # both replayed
    finally:
        process.terminate()
        process.wait(30)


def test_a_kind_cannot_take_a_type_another_kind_has() -> None:
    class Impostor(EchoKind):
        name = "impostor"
        tool_types = ("apply_patch",)
        item_types = ()

    registry = ToolRegistry(client_kinds())
    with pytest.raises(ValueError, match="tool type 'apply_patch' already registered"):
        registry.register(Impostor())
    assert registry.for_tool("apply_patch").name == "apply_patch"  # type: ignore[union-attr]


def test_a_server_run_plugin_kind_runs_on_the_server_with_its_own_service(tmp_path: Path) -> None:
    site = tmp_path / "site"
    site.mkdir()
    _install(site, "tally_kind", "tally = tally_kind:make_kind")
    process, url = start_serve("--no-embedded", "--db", f"sqlite:///{tmp_path}/db.sqlite", log=tmp_path / "serve.log",
                               env={"PYTHONPATH": str(site)})  # fmt: skip
    try:
        with httpx.Client(base_url=f"{url}/v1", timeout=30) as http:
            tools = [{"type": "tally", "description": "Tally a visit under a label"}]
            counts = []
            for _ in range(2):
                reply = http.post("/responses", json={"model": "sim", "input": "Please tally a visit", "tools": tools})
                assert reply.status_code == 200, reply.text
                call, message = reply.json()["output"]
                assert call["type"] == "tally_call" and call["status"] == "completed" and call["id"].startswith("tly_")
                assert f"returned: count {call['count']}" in message["content"][0]["text"]  # the model read it
                counts.append(call["count"])
            assert counts == [1, 2]  # one service, made at start-up, kept by the kind
    finally:
        process.terminate()
        process.wait(30)


def test_a_plugin_that_cannot_be_loaded_stops_the_start(tmp_path: Path) -> None:
    site = tmp_path / "site"
    site.mkdir()
    _install(site, "echo_kind", "broken = echo_kind:NO_SUCH_KIND")
    with pytest.raises(AssertionError, match="exited"):
        start_serve("--no-embedded", "--db", f"sqlite:///{tmp_path}/db.sqlite", log=tmp_path / "serve.log",
                    env={"PYTHONPATH": str(site)})  # fmt: skip
    assert "tool kind plug-in 'broken'" in (tmp_path / "serve.log").read_text()


def test_a_compaction_transcript_keeps_a_plugin_kinds_items() -> None:
    from responsa.engine.responses.features._compaction import transcript
    from responsa.protocol import FunctionCall, UnknownItem

    items = [
        FunctionCall(call_id="c1", name="lookup", arguments='{"q": "tides"}'),
        UnknownItem.model_validate({"type": "echo_call", "id": "echo_1", "call_id": "c2", "text": "hello there"}),
        UnknownItem.model_validate({"type": "acme:note", "id": "n1"}),  # no kind reads it: left out
    ]
    without = transcript(items, ToolRegistry(client_kinds()))
    assert without == 'tool call lookup({"q": "tides"})'
    lines = transcript(items, ToolRegistry([*client_kinds(), EchoKind()])).splitlines()
    assert lines == ['tool call lookup({"q": "tides"})', 'echo_call: {"text": "hello there"}']


def test_an_entry_point_may_name_a_kind_class(tmp_path: Path) -> None:
    """A plug-in's entry point may name its kind class (a callable that makes the kind), not only an
    instance: it is registered as an instance."""
    site = tmp_path / "site"
    site.mkdir()
    _install(site, "echo_kind", "echo = echo_kind:EchoKind")
    probe = ("from responsa.engine.tools import load_tool_registry\n"
             "kind = load_tool_registry().for_tool('echo')\n"
             "print(type(kind).__name__, isinstance(kind, type))\n")  # fmt: skip
    found = subprocess.run([sys.executable, "-c", probe], env={**os.environ, "PYTHONPATH": str(site)},
                           capture_output=True, text=True, check=True)  # fmt: skip
    assert found.stdout.split() == ["EchoKind", "False"]
