"""``code_interpreter``, run by the server for any model: the model is offered ``python(code)``; its
call becomes a ``code_interpreter_call`` whose code streams as it is written
(``response.code_interpreter_call_code.delta``/``.done``), then runs in the request's container, a
sandboxed Python that keeps its state between calls (``interpreting``, then ``completed``).

What the code printed and drew are the item's ``outputs`` (``logs``, and ``image`` as a ``data:`` URL),
stored always and shown where ``include: ["code_interpreter_call.outputs"]`` asks; the model reads
them as the call's result. Files the code writes under ``/mnt/data`` become container files, and the
answer's mentions of them (``sandbox:/mnt/data/…``) ``container_file_citation`` annotations.

``container: {"type": "auto"}`` reuses the running container an earlier call in the context used, or
makes one (with its ``file_ids`` and ``memory_limit``) when the code first runs; a container id must
be a running container of the tenant (400 ``Container is expired.`` otherwise). Without a sandbox, or
on the simulator (which simulates it), the tool is not this kind's.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Mapping, Sequence
from dataclasses import dataclass, field
from functools import partial
from typing import TYPE_CHECKING, Any, ClassVar

from responsa.protocol import (
    CodeInterpreterCall,
    CodeInterpreterCodeDelta,
    CodeInterpreterCodeDone,
    CodeInterpreterContainer,
    CodeInterpreterTool,
    CodeOutput,
    FunctionCall,
    FunctionCallOutput,
    FunctionTool,
    Item,
    ResponsaError,
    StreamEvent,
    Tool,
    ToolRef,
    new_id,
)

from ..containers import check_network_policy
from ._container_session import ContainerSession, auto_session, named_session
from ._hosted import hosted_end, hosted_event
from ._kind import Closed, ItemEnd, Recorded, Replay, Route, ServerContext, ToolPlan, ToolSetup, Where
from .custom import InputDecoder

if TYPE_CHECKING:
    from ..containers import ContainerService

__all__ = ["CodeInterpreterKind"]

NAME = "code_interpreter"
FUNCTION = "python"
_READ_BACK = 8000
"""Characters of a cell's output the model reads back (the client gets all of it)."""

_FUNCTION = FunctionTool(
    name=FUNCTION,
    description=(
        "Run Python in a stateful sandbox, like a Jupyter notebook: variables and imports persist between "
        "calls; the value of the last line is shown; print what you need to see. numpy, pandas and matplotlib "
        "may be imported. Files are in /mnt/data: save files there for the user and refer to them as "
        "sandbox:/mnt/data/NAME. There is no internet access."
    ),
    parameters={
        "type": "object",
        "properties": {"code": {"type": "string", "description": "The Python code to run"}},
        "required": ["code"],
    },
)


@dataclass
class _Call:
    """A ``python`` call as the model writes it: its code streams; once complete, the server runs it."""

    item: CodeInterpreterCall
    session: ContainerSession
    decoder: InputDecoder = field(default_factory=lambda: InputDecoder("code"))

    def opened(self, where: Where) -> Sequence[StreamEvent]:
        return [hosted_event(self.item.type, "in_progress", where)]

    def delta(self, chunk: str, where: Where) -> Sequence[StreamEvent]:
        code = self.decoder.feed(chunk)
        return [CodeInterpreterCodeDelta.of_token(where["item_id"], where["output_index"], code)] if code else []

    def close(self, arguments: str, status: ItemEnd, where: Where) -> Closed:
        self.item.code = InputDecoder.final(arguments, "code")
        done = [CodeInterpreterCodeDone(code=self.item.code, **where)]
        if status == "incomplete":  # cut short by the token limit: nothing runs
            self.item.status = "incomplete"
            return Closed(done)
        return Closed(done, run=partial(_run, self.session, self.item))


async def _run(
    session: ContainerSession, item: CodeInterpreterCall, context: ServerContext, where: Where
) -> AsyncIterator[list[StreamEvent]]:
    """Run the code; what it printed and drew end the item, the files it wrote are cited."""
    yield [hosted_event("code_interpreter_call", "interpreting", where)]
    context.timeline.mark("code_interpreter.started", item_id=item.id)
    try:
        container = await session.ready()
        ran = await session.containers.run(container, item.code or "")
    except ResponsaError as failure:  # the container expired meanwhile, a file went: the model is told
        item.status, item.outputs = "failed", [CodeOutput(type="logs", logs=failure.message)]
    else:
        logs = ran.execution.logs + (ran.execution.error or "")
        item.outputs = [CodeOutput(type="logs", logs=logs)] if logs else []
        item.outputs += [CodeOutput(type="image", url=f"data:image/png;base64,{png}") for png in ran.execution.images]
        item.status = "completed"
        for file in ran.files:
            context.annotations.add_container_file(container.id, file.id, file.path)
    context.timeline.mark("code_interpreter.ended", item_id=item.id, status=item.status)
    yield hosted_end(item, context, where)


class CodeInterpreterKind:
    """Runs the model's code in the tenant's containers (None: no sandbox here, the tool is left out)."""

    name = NAME
    tool_types = (NAME,)
    item_types: ClassVar[Mapping[str, str]] = {"code_interpreter_call": "ci"}

    def metered(self, items: Sequence[Item]) -> Mapping[str, int]:
        """What a response's code counts in the usage ledger: a session for each container it ran in."""
        return {"code_interpreter_sessions": len({getattr(item, "container_id", "") for item in items})}

    progress = "interpreting"
    """The phase of its progress event between ``in_progress`` and ``completed``."""

    def __init__(self, containers: ContainerService | None, status: dict[str, Any] | None = None) -> None:
        """``status``: what ``/v1/server`` says of it (the sandbox, and why not)."""
        self._containers = containers
        self.status = status or {"enabled": containers is not None and containers.unavailable is None}

    def offer(self, tool: Tool, tools: ToolPlan, param: str) -> None:
        """Nothing without a sandbox (see :meth:`prepare`); a network the code cannot have is a 400 now."""
        if isinstance(tool, CodeInterpreterTool) and isinstance(tool.container, CodeInterpreterContainer):
            check_network_policy(tool.container.network_policy, f"{param}.container.network_policy")

    async def prepare(self, setup: ToolSetup) -> list[Recorded]:
        tool = next((tool for tool in setup.request.tools if isinstance(tool, CodeInterpreterTool)), None)
        containers = self._containers.for_tenant(setup.tenant) if self._containers is not None else None
        if tool is None or containers is None:
            return []
        if setup.simulated or containers.unavailable is not None:  # the simulator's own, or left out
            if setup.simulated and isinstance(tool.container, str):  # but a container it names must be one
                await containers.running(tool.container, param="tools.container")
            return []
        if isinstance(tool.container, str):
            session = await named_session(containers, tool.container, "tools.container")
        else:
            auto, context = tool.container, [*setup.history, *setup.input_items]
            used = (item.container_id for item in reversed(context)
                    if isinstance(item, CodeInterpreterCall) and item.container_id.startswith("cntr_"))  # fmt: skip
            session = await auto_session(containers, used, NAME, auto.memory_limit, auto.file_ids or [],
                                         auto.network_policy)  # fmt: skip
        setup.tools.add(_FUNCTION, Route(NAME, FUNCTION, target=session), "tools")
        return []

    def open_call(self, route: Route, call_id: str) -> _Call:
        session: ContainerSession = route.target
        item = CodeInterpreterCall(id=new_id("ci"), status="in_progress", code="", container_id=session.container_id)
        return _Call(item, session)

    def chosen(self, ref: ToolRef, name: str, route: Route) -> bool:
        return ref.type == NAME

    def replay(self, item: Item, context: Replay) -> list[Item] | None:
        """Code the server ran, as the model read it: the call and what it printed (not the images)."""
        if not isinstance(item, CodeInterpreterCall) or item.outputs is None or item.container_id.endswith("simulated"):
            return None
        call_id = item.id or new_id("ci")
        return [
            FunctionCall(id=call_id, call_id=call_id, name=FUNCTION, arguments=json.dumps({"code": item.code or ""}),
                         status="completed"),
            FunctionCallOutput(call_id=call_id, output=_as_text(item), status="completed"),
        ]  # fmt: skip


def _as_text(item: CodeInterpreterCall) -> str:
    if item.status == "failed":
        return "The code could not run: " + " ".join(output.logs or "" for output in item.outputs or [])
    logs = "".join(output.logs or "" for output in item.outputs or [] if output.type == "logs")
    images = sum(1 for output in item.outputs or [] if output.type == "image")
    if len(logs) > _READ_BACK:
        logs = logs[:_READ_BACK] + f"\n[output cut: {len(logs)} characters in all]"
    text = logs or "(no output)"
    return text + (f"\n[{images} image(s) shown to the user]" if images else "")
