"""``shell`` (a list of commands) and ``local_shell`` (one argv), run on the client's machine. A ``shell``
tool whose ``environment`` is a container (``container_auto``, ``container_reference``: OpenAI's hosted
shell) is not served yet: a 400 naming it, never a call left for a client that waits for the server."""

from __future__ import annotations

from typing import Any

from responsa.protocol import (
    FunctionTool,
    InvalidRequest,
    LocalShellAction,
    LocalShellCall,
    LocalShellCallOutput,
    ShellAction,
    ShellCall,
    ShellCallOutput,
    Tool,
)

from ._arguments import as_int, as_strings
from ._fixed import FixedKind

__all__ = ["LOCAL_SHELL", "SHELL"]


def _fill_shell(item: ShellCall, values: dict[str, Any]) -> None:
    item.action = ShellAction(commands=as_strings(values.get("commands")), timeout_ms=as_int(values.get("timeout_ms")))


def _fill_local_shell(item: LocalShellCall, values: dict[str, Any]) -> None:
    directory = values.get("working_directory")
    item.action = LocalShellAction(
        command=as_strings(values.get("command")),
        working_directory=directory if isinstance(directory, str) else None,
        timeout_ms=as_int(values.get("timeout_ms")),
    )


def _shell_result(output: ShellCallOutput) -> tuple[str, str]:
    results = []
    for entry in output.output:
        parts = [entry.stdout]
        if entry.stderr:
            parts.append(f"stderr:\n{entry.stderr}")
        if entry.outcome is not None:
            outcome = entry.outcome
            parts.append(f"exit code {outcome['exit_code']}" if "exit_code" in outcome else str(outcome.get("type")))
        results.append("\n".join(part for part in parts if part))
    return output.call_id, "\n".join(results)


def _action_arguments(item: ShellCall | LocalShellCall) -> dict[str, Any]:
    """What the model wrote, back from a shell call's action."""
    return item.action.model_dump(exclude={"type", "env"})


_SHELL_DEFINITION = FunctionTool(
    name="shell",
    description="Run shell commands on the user's machine, in order; their output comes back.",
    parameters={
        "type": "object",
        "properties": {
            "commands": {"type": "array", "items": {"type": "string"}, "description": "Shell commands."},
            "timeout_ms": {"type": "integer"},
        },
        "required": ["commands"],
    },
)


def _shell_offered(tool: Tool, param: str) -> FunctionTool:
    environment = (tool.model_extra or {}).get("environment")
    kind = environment.get("type") if isinstance(environment, dict) else None
    if kind not in (None, "local"):
        raise InvalidRequest(f"A shell in a '{kind}' environment (the hosted shell) is not served here yet: "
                             "only the client's own shell ('environment': {'type': 'local'}, or none) is.",
                             param=f"{param}.environment.type", code="unsupported_value")  # fmt: skip
    return _SHELL_DEFINITION


SHELL = FixedKind(
    name="shell",
    id_prefix="sh",
    description=_SHELL_DEFINITION.description or "",
    parameters=_SHELL_DEFINITION.parameters or {},
    offered=_shell_offered,
    new_item=lambda item_id, call_id: ShellCall(
        id=item_id, call_id=call_id, action=ShellAction(commands=[]), status="in_progress"
    ),
    fill=_fill_shell,
    call_type=ShellCall,
    call_arguments=_action_arguments,
    output_type=ShellCallOutput,
    output_text=_shell_result,
)

LOCAL_SHELL = FixedKind(
    name="local_shell",
    id_prefix="lsh",
    description="Run one command (an argv list) on the user's machine; its output comes back.",
    parameters={
        "type": "object",
        "properties": {
            "command": {"type": "array", "items": {"type": "string"}, "description": "The command and arguments."},
            "working_directory": {"type": "string"},
            "timeout_ms": {"type": "integer"},
        },
        "required": ["command"],
    },
    new_item=lambda item_id, call_id: LocalShellCall(
        id=item_id, call_id=call_id, action=LocalShellAction(command=[]), status="in_progress"
    ),
    fill=_fill_local_shell,
    call_type=LocalShellCall,
    call_arguments=_action_arguments,
    output_type=LocalShellCallOutput,
    output_text=lambda output: (output.id, output.output),
)
