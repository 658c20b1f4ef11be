"""How long the hosted shell takes from the model's call to its output, against the same command
through the code interpreter: the app in process (no sockets), the real sandbox, each response's own
timeline (``GET /v1/responses/{id}/timeline``) read for the span from the run's start (the shell call's
``output_item.done``; the code interpreter's ``code_interpreter.started``) to its output's
``output_item.done``. The model: one written here that calls the offered tool with a fixed command
and then answers (``scripted``), and the simulator, held to a shell call by ``tool_choice`` (it writes
a command of its own from the prompt). Prints median and p99 of ``--calls`` (a benchmark: it asserts
nothing).

    python bench/hosted_shell.py [--calls 50]
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from starlette.testclient import TestClient

from responsa.backends import Backend, Finish, ModelEvent, ModelRequest, TextDelta, TokenUsage, ToolCallDelta
from responsa.config import Settings
from responsa.serve import create_app

COMMAND = "echo hello"
ARGUMENTS = {
    "shell": {"commands": [COMMAND]},
    "python": {"code": f"import subprocess\nprint(subprocess.run({COMMAND!r}, shell=True).returncode)"},
}


class OneCall(Backend):
    """Calls the request's one tool with :data:`ARGUMENTS`, then answers once it has the result."""

    def models(self) -> Sequence[str]:
        return ["scripted"]

    @asynccontextmanager
    async def stream(self, request: ModelRequest) -> AsyncIterator[AsyncIterator[list[ModelEvent]]]:
        answered = any(getattr(item, "type", None) == "function_call_output" for item in request.items)

        async def events() -> AsyncIterator[list[ModelEvent]]:
            usage = TokenUsage(input_tokens=10, output_tokens=5)
            if answered:
                yield [TextDelta("Done."), Finish("stop", usage)]
                return
            name = request.tools[0].name
            call = ToolCallDelta(0, json.dumps(ARGUMENTS[name]), name=name, call_id="call_1")
            yield [call, Finish("tool_calls", usage)]

        yield events()


def span(http: TestClient, response_id: str, start: str, item_type: str) -> float:
    """Seconds from the timeline's ``start`` mark to the ``output_item.done`` of ``item_type``."""
    marks = http.get(f"/v1/responses/{response_id}/timeline").json()
    marks = marks.get("marks", marks) if isinstance(marks, dict) else marks
    began = next(mark["at"] for mark in marks if _is(mark, start))
    ended = next(mark["at"] for mark in marks
                 if mark["event"] == "output_item.done" and mark.get("item_type") == item_type)  # fmt: skip
    return float(ended - began)


def _is(mark: dict[str, Any], start: str) -> bool:
    if start == "shell_call":
        return mark["event"] == "output_item.done" and mark.get("item_type") == "shell_call"
    return bool(mark["event"] == start)


def measure(http: TestClient, body: dict[str, Any], start: str, item_type: str, calls: int) -> list[float]:
    times = []
    for _ in range(calls + 1):
        reply = http.post("/v1/responses", json=body)
        reply.raise_for_status()
        times.append(span(http, reply.json()["id"], start, item_type))
    return times[1:]  # the first makes the container


def report(name: str, times: list[float]) -> None:
    ordered = sorted(times)
    p99 = ordered[min(len(ordered) - 1, round(0.99 * (len(ordered) - 1)))]
    print(f"{name}: median {statistics.median(times) * 1000:.1f} ms, p99 {p99 * 1000:.1f} ms ({len(times)} calls)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=50)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as scratch:
        settings = Settings(db_url=f"sqlite:///{Path(scratch) / 'r.db'}", embedded=False)
        with TestClient(create_app(settings, backends=[OneCall()]), base_url="http://bench") as http:
            container = http.post("/v1/containers", json={"name": "bench"}).json()["id"]
            shell = {"type": "shell", "environment": {"type": "container_reference", "container_id": container}}
            code = {"type": "code_interpreter", "container": container}
            ask = {"model": "scripted", "input": "Say hello."}
            shelled = measure(http, {**ask, "tools": [shell]}, "shell_call", "shell_call_output", args.calls)
            report("hosted shell (scripted)", shelled)
            report("code interpreter (scripted)", measure(http, {**ask, "tools": [code]}, "code_interpreter.started",
                                                          "code_interpreter_call", args.calls))  # fmt: skip
            forced = {"model": "sim", "input": "Run the command: echo hello", "tools": [shell],
                      "tool_choice": {"type": "shell"}}  # fmt: skip
            report("hosted shell (simulator)", measure(http, forced, "shell_call", "shell_call_output", args.calls))


if __name__ == "__main__":
    main()
