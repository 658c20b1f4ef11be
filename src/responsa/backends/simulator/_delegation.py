"""The simulator's delegation rule (hosted multi-agent): offered ``spawn_agent`` and ``wait_agent``, a
prompt ``Delegate …: <task>; <task>; …`` has the model spawn one subagent per task (``task_1``,
``task_2``…), wait for them all, and answer with what each reported (its first ``REPORTED`` words: a
root sums up). With parallel calls it spawns them all and waits in one turn;
without, one call a turn. Tests and benchmarks ask for subagents so."""

from __future__ import annotations

import json
import re
from collections.abc import Sequence

from responsa.backends._base import ModelRequest

from ._tools import PlannedCall

__all__ = ["delegated_answer", "plan_delegation"]

_DELEGATE = re.compile(r"\bdelegate\b[^:\n]*:\s*(.+)", re.IGNORECASE | re.DOTALL)
_NEEDED = frozenset({"spawn_agent", "wait_agent"})
REPORTED = 25
"""Words of each subagent's result the root's answer repeats at most."""


def _summed_up(said: object) -> str:
    words = str(said).split()
    return " ".join(words[:REPORTED]) + (" …" if len(words) > REPORTED else "")


def _tasks(prompt: str) -> list[str]:
    found = _DELEGATE.search(prompt)
    return [task.strip() for task in found.group(1).split(";") if task.strip()] if found else []


def plan_delegation(request: ModelRequest, prompt: str, results: Sequence[tuple[str, str]]) -> list[PlannedCall] | None:
    """The delegation calls still to make this turn ([] once the wait has answered: the model answers);
    None where the rule does not apply."""
    if request.tool_mode == "none" or not _NEEDED <= {tool.name for tool in request.callable_tools()}:
        return None
    tasks = _tasks(prompt)
    if not tasks:
        return None
    names = [f"task_{number}" for number in range(1, len(tasks) + 1)]
    calls = [PlannedCall("spawn_agent", json.dumps({"task_name": name, "message": task}))
             for name, task in zip(names, tasks, strict=True)]  # fmt: skip
    calls.append(PlannedCall("wait_agent", json.dumps({"targets": names})))
    waited = _last_wait(results)
    if waited is not None:  # waited: once more while it timed out with some still running, else answer
        return calls[-1:] if waited.get("timed_out") is True else []
    return calls if request.parallel_tool_calls else calls[len(results) : len(results) + 1]


def _last_wait(results: Sequence[tuple[str, str]]) -> dict[str, object] | None:
    """What the last ``wait_agent`` answered (a result's name: the call as written), if one did."""
    output = next((output for name, output in reversed(results) if name.startswith("wait_agent")), None)
    try:
        answer = json.loads(output) if output is not None else None
    except ValueError:
        return None
    return answer if isinstance(answer, dict) else None


def delegated_answer(results: Sequence[tuple[str, str]]) -> str | None:
    """The answer once the subagents have reported: each one's result, in the order they were named."""
    waited = _last_wait(results)
    status = waited.get("status") if waited is not None else None
    if not isinstance(status, dict):
        return None
    reports = []
    for name, entry in status.items():
        # an ended one is {"<status>": <what it said>}; one still running is its status alone
        state, said = next(iter(entry.items())) if isinstance(entry, dict) and entry else (str(entry), "")
        short = _summed_up(said)
        reports.append(f"{name.rsplit('/', 1)[-1]}: {short}" if state == "completed" else f"{name} {state}: {short}")
    return "Subagents reported. " + "; ".join(reports)
