"""``shell`` (a list of commands) and ``local_shell`` (one argv).

A ``shell`` tool with no ``environment``, or ``{"type": "local"}``, is the client's: its calls carry
``environment: {"type": "local"}`` (what current SDKs look for before they run one) and end the
response for the client. One in a container (``container_auto``, ``container_reference``: OpenAI's
hosted shell) the server runs, in the container's sandbox (see ``_container_shell``), for any model."""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any, ClassVar

from responsa.protocol import (
    ContainerAuto,
    FunctionTool,
    InvalidRequest,
    Item,
    LocalShellAction,
    LocalShellCall,
    LocalShellCallOutput,
    ShellAction,
    ShellCall,
    ShellCallOutput,
    ShellTool,
    Tool,
    ToolRef,
)

from ..containers import check_network_policy
from ..skills import Bundle, mounted_files
from ._arguments import as_int, as_strings
from ._container_session import auto_session, named_session
from ._container_shell import HostedShellCall, ShellLimits, fill_shell
from ._fixed import FixedKind
from ._kind import OpenCall, Recorded, Replay, Route, ToolPlan, ToolSetup

if TYPE_CHECKING:
    from ..containers import ContainerService
    from ..skills import SkillService

__all__ = ["LOCAL_SHELL", "ShellKind"]

LOCAL = {"type": "local"}


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


def _parameters(most_commands: int | None = None) -> dict[str, Any]:
    commands: dict[str, Any] = {"type": "array", "items": {"type": "string"}, "description": "Shell commands."}
    if most_commands is not None:
        commands["maxItems"] = most_commands
    return {
        "type": "object",
        "properties": {
            "commands": commands,
            "timeout_ms": {"type": "integer"},
            "max_output_length": {"type": "integer", "description": "Characters of each command's output to keep."},
        },
        "required": ["commands"],
    }


_PARAMETERS = _parameters()
MAX_COMMANDS = 16
"""Commands one hosted call may run (so that a small model's sampled list ends; more take another call)."""
_CLIENT_DESCRIPTION = "Run shell commands on the user's machine, in order; their output comes back."
_HOSTED = FunctionTool(
    name="shell",
    description=(
        "Run shell commands in a sandboxed Linux container, in order, each in /bin/sh from /mnt/data (files "
        "there persist between calls; save files for the user there and refer to them as sandbox:/mnt/data/NAME); "
        "their stdout, stderr and exit codes come back. The internet is reachable only where the container's "
        "network policy allows a host (through the HTTP(S)_PROXY it sets)."
    ),
    parameters=_parameters(MAX_COMMANDS),
)

_CLIENT_SHELL = FunctionTool(name="shell", description=_CLIENT_DESCRIPTION, parameters=_PARAMETERS)
MOUNTED = "/mnt/skills"
"""Where a container's skills are, read-only."""

_CLIENT = FixedKind(
    name="shell",
    id_prefix="sh",
    description=_CLIENT_DESCRIPTION,
    parameters=_PARAMETERS,
    new_item=lambda item_id, call_id: ShellCall(
        id=item_id, call_id=call_id, action=ShellAction(commands=[]), status="in_progress", environment=dict(LOCAL)
    ),
    fill=fill_shell,
    call_type=ShellCall,
    call_arguments=_action_arguments,
    output_type=ShellCallOutput,
    output_text=_shell_result,
)


class ShellKind:
    """``shell``: the client's calls as a fixed-shape kind; a container's run here (None: no sandbox,
    a hosted shell is a 400 saying why)."""

    name = "shell"
    tool_types = ("shell",)
    item_types: ClassVar[Mapping[str, str]] = _CLIENT.item_types

    def __init__(
        self,
        containers: ContainerService | None,
        status: dict[str, Any] | None = None,
        limits: ShellLimits | None = None,
        skills: SkillService | None = None,
    ) -> None:
        """``status``: what ``/v1/server`` says of the hosted shell (the sandbox's, and why not);
        ``skills``: the tenants' skills a container may mount."""
        self._containers = containers
        self._skills = skills
        self._limits = limits or ShellLimits()
        self.status = status or {"enabled": containers is not None and containers.unavailable is None}

    def offer(self, tool: Tool, tools: ToolPlan, param: str) -> None:
        """The client's shell is offered now (told of its local skills); a container's checked now and
        offered by :meth:`prepare`."""
        if not isinstance(tool, ShellTool) or not tool.hosted:
            local = tool.environment if isinstance(tool, ShellTool) else None
            skills = [(skill.name, skill.description, skill.path) for skill in (local and local.skills) or []]  # type: ignore[union-attr]
            offered = _CLIENT_SHELL.model_copy(update={"description": _with_skills(_CLIENT_DESCRIPTION, skills)})
            tools.add(offered, Route(self.name, self.name), param)
        elif isinstance(tool.environment, ContainerAuto):
            check_network_policy(tool.environment.network_policy, f"{param}.environment.network_policy")

    async def prepare(self, setup: ToolSetup) -> Sequence[Recorded]:
        """The hosted shell offered, reaching its container (400 without a sandbox, or for a container
        that is not running)."""
        hosted = [(index, tool) for index, tool in enumerate(setup.request.tools)
                  if isinstance(tool, ShellTool) and tool.hosted]  # fmt: skip
        if not hosted:
            return []
        index, tool = hosted[0]
        param = f"tools[{index}].environment"
        containers = self._containers.for_tenant(setup.tenant) if self._containers is not None else None
        if containers is None or containers.unavailable is not None:
            why = containers.unavailable if containers is not None else "no sandbox is configured"
            raise InvalidRequest(f"The hosted shell cannot run on this server: {why}.", param=f"{param}.type",
                                 code="unsupported_value")  # fmt: skip
        environment = tool.environment
        bundles: list[Bundle] = []
        if isinstance(environment, ContainerAuto):
            used = _containers_used([*setup.history, *setup.input_items])
            auto = environment
            session = await auto_session(containers, used, self.name, auto.memory_limit, auto.file_ids or [],
                                         auto.network_policy)  # fmt: skip
            if auto.skills and self._skills is not None:
                bundles = await self._skills.for_tenant(setup.tenant).mounted(auto.skills, f"{param}.skills")
                session.skills = mounted_files(bundles)
        else:
            session = await named_session(containers, environment.container_id, f"{param}.container_id")  # type: ignore[union-attr]
        skills = [(bundle.name, bundle.description, f"{MOUNTED}/{bundle.name}") for bundle in bundles]
        offered = _HOSTED.model_copy(update={"description": _with_skills(_HOSTED.description or "", skills)})
        setup.tools.add(offered, Route(self.name, self.name, target=session), f"tools[{index}]")
        return []

    def open_call(self, route: Route, call_id: str) -> OpenCall:
        if route.target is None:
            return _CLIENT.open_call(route, call_id)
        return HostedShellCall.opening(route.target, call_id, self._limits)

    def chosen(self, ref: ToolRef, name: str, route: Route) -> bool:
        return ref.type == self.name

    def replay(self, item: Item, context: Replay) -> list[Item] | None:
        """Either shell's call and output, as a function call and its result."""
        return _CLIENT.replay(item, context)


def _with_skills(description: str, skills: Sequence[tuple[str, str, str]]) -> str:
    """The shell's description, telling the model of its skills: name, description and folder (whose
    ``SKILL.md`` it reads before it uses one), as OpenAI tells its models."""
    if not skills:
        return description
    listed = "\n".join(f"- {name}: {what} (folder: {folder}; read {folder}/SKILL.md first)"
                       for name, what, folder in skills)  # fmt: skip
    return (
        f"{description}\nSkills available (instructions and files for a task; use one when the task matches):\n{listed}"
    )


def _containers_used(context: Sequence[Item]) -> Iterator[str]:
    """The containers of the context's hosted shell calls, the last first."""
    for item in reversed(context):
        if isinstance(item, ShellCall) and (container_id := (item.environment or {}).get("container_id")):
            yield container_id


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
