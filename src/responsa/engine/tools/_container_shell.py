"""The hosted shell's call: the model's commands, run one after the other in the request's container.

Its ``shell_call`` (with ``environment: {"type": "container_reference", "container_id": ...}``) streams
each command (``response.shell_call_command.added``/``.delta``/``.done``) once the model has written
the call; the server then adds the ``shell_call_output`` it makes and streams what each command
printed (``response.shell_call_output_content.delta``/``.done``), as OpenAI's hosted shell does. The
model reads the output as the call's result; files the commands wrote under /mnt/data are container
files, cited where the answer names them (``sandbox:/mnt/data/…``)."""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass
from functools import partial
from typing import TYPE_CHECKING, Any

from responsa.protocol import (
    ResponsaError,
    ShellAction,
    ShellCall,
    ShellCallOutput,
    ShellCommandEvent,
    ShellOutput,
    ShellOutputDelta,
    ShellOutputDone,
    StreamEvent,
    new_id,
)

from ._arguments import as_int, as_object, as_strings
from ._kind import Closed, ItemEnd, ServerContext, Where

if TYPE_CHECKING:
    from ._container_session import ContainerSession

__all__ = ["HostedShellCall", "ShellLimits", "fill_shell"]


def fill_shell(item: ShellCall, values: dict[str, Any]) -> None:
    """The call's commands and limits, from what the model wrote."""
    item.action = ShellAction(commands=as_strings(values.get("commands")), timeout_ms=as_int(values.get("timeout_ms")),
                              max_output_length=as_int(values.get("max_output_length")))  # fmt: skip


@dataclass(frozen=True)
class ShellLimits:
    """What a hosted shell's command is given where the model's call says less or nothing."""

    seconds: float = 30.0
    """A command's time when the call gives no ``timeout_ms`` (the sandbox's own limit caps any)."""
    output_characters: int = 16384
    """Of each command's stdout and of its stderr, when the call gives no ``max_output_length``."""


@dataclass
class HostedShellCall:
    """A hosted ``shell_call`` as the model writes it; complete, the server runs its commands."""

    item: ShellCall
    session: ContainerSession
    limits: ShellLimits

    @classmethod
    def opening(cls, session: ContainerSession, call_id: str, limits: ShellLimits) -> HostedShellCall:
        environment = {"type": "container_reference", "container_id": session.container_id}
        item = ShellCall(id=new_id("sh"), call_id=call_id, action=ShellAction(commands=[]), status="in_progress",
                         environment=environment)  # fmt: skip
        return cls(item, session, limits)

    def opened(self, where: Where) -> Sequence[StreamEvent]:
        return ()

    def delta(self, chunk: str, where: Where) -> Sequence[StreamEvent]:
        return ()

    def close(self, arguments: str, status: ItemEnd, where: Where) -> Closed:
        fill_shell(self.item, as_object(arguments))
        index = where["output_index"]
        events: list[StreamEvent] = []
        for number, command in enumerate(self.item.action.commands):
            events += [
                ShellCommandEvent(type="response.shell_call_command.added", output_index=index, command_index=number,
                                  command=""),
                ShellCommandEvent(type="response.shell_call_command.delta", output_index=index, command_index=number,
                                  delta=command),
                ShellCommandEvent(type="response.shell_call_command.done", output_index=index, command_index=number,
                                  command=command),
            ]  # fmt: skip
        if status == "incomplete":  # cut short by the token limit: nothing runs
            self.item.status = "incomplete"
            return Closed(events)
        return Closed(events, run=partial(_run, self))


async def _run(call: HostedShellCall, context: ServerContext, where: Where) -> AsyncIterator[list[StreamEvent]]:
    """The call done, then its output item, each command's output streamed as it ends."""
    item, action = call.item, call.item.action
    item.status = "completed"
    yield [context.slots.close(item, where)]
    limit = action.max_output_length or call.limits.output_characters
    seconds = action.timeout_ms / 1000 if action.timeout_ms else call.limits.seconds
    output = ShellCallOutput(id=new_id("sho"), call_id=item.call_id, output=[], status="in_progress",
                             max_output_length=action.max_output_length)  # fmt: skip
    placed, added = context.slots.open(output)
    yield [added]
    context.timeline.mark("shell.started", item_id=item.id)
    for number, command in enumerate(action.commands):
        entry = await _command(call.session, command, seconds, limit, context)
        output.output = [*output.output, entry]
        yield [
            ShellOutputDelta(item_id=placed["item_id"], output_index=placed["output_index"], command_index=number,
                             delta={"stdout": entry.stdout, "stderr": entry.stderr}),
            ShellOutputDone(item_id=placed["item_id"], output_index=placed["output_index"], command_index=number,
                            output=[entry.model_dump()]),
        ]  # fmt: skip
    output.status = "completed"
    context.timeline.mark("shell.ended", item_id=item.id)
    yield [context.slots.close(output, placed)]


async def _command(
    session: ContainerSession, command: str, seconds: float, limit: int, context: ServerContext
) -> ShellOutput:
    """One command's output; a container that expired or went meanwhile is said in its stderr."""
    try:
        container = await session.ready()
        done = await session.containers.command(container, command, seconds, limit)
    except ResponsaError as failure:
        return ShellOutput(stdout="", stderr=failure.message, outcome={"type": "exit", "exit_code": 1})
    for file in done.files:
        context.annotations.add_container_file(container.id, file.id, file.path)
    ran = done.ran
    outcome = {"type": "timeout"} if ran.exit_code is None else {"type": "exit", "exit_code": ran.exit_code}
    return ShellOutput(stdout=ran.stdout, stderr=ran.stderr, outcome=outcome)
