"""Asynchronous calls of function and custom tools (``"async": true`` on the tool, OpenAI's async tool
calling): the client still runs the call, but the model does not wait for it. The call item carries
``async: true`` and the model's turn goes on at once, reading an acknowledgement in place of the
result; the result comes in a later request (an output item with the call's ``call_id``), which the
model then reads as a message saying which call it answers, since the call's place in the context
already holds the acknowledgement. That message carries ``answers_call`` (the call's id) for backends
that read the items themselves rather than text."""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence

from responsa.protocol import (
    CustomToolCallOutput,
    FunctionCall,
    FunctionCallOutput,
    InputText,
    InvalidRequest,
    Item,
    Message,
    OutputItemEvent,
    StreamEvent,
    Tool,
    new_id,
)

from ._kind import Replay, ServerContext, ServerRun, Where

__all__ = ["ACKNOWLEDGEMENT", "acknowledged", "answer_read_late", "asks_async", "is_async", "read_with_acknowledgement"]

ACKNOWLEDGEMENT = (
    "The call was started asynchronously: its result is not available in this turn and will arrive in a later "
    "message. Continue without it, and do not call the tool again for the same request."
)
"""What the model reads as the result of an asynchronous call, until the client sends the result."""


def asks_async(tool: Tool, param: str) -> bool:
    """Whether a function or custom tool is declared ``"async": true`` (a value that is not a boolean:
    400 on ``param.async``)."""
    asked = (tool.model_extra or {}).get("async")
    if asked not in (None, True, False):
        raise InvalidRequest("'async' must be a boolean.", param=f"{param}.async", code="invalid_type")
    return asked is True


def is_async(item: Item) -> bool:
    """Whether a call item was made by an asynchronous tool (it carries ``async: true``)."""
    return (item.model_extra or {}).get("async") is True


def acknowledged(item: Item) -> ServerRun:
    """The call's run on the server's side: nothing to run, only its item done, so that the loop asks
    the model again (it goes on while the client runs the call)."""

    async def run(context: ServerContext, where: Where) -> AsyncIterator[Sequence[StreamEvent]]:
        index = where["output_index"]
        yield [OutputItemEvent(type="response.output_item.done", output_index=index, item=item.model_copy())]

    return run


def read_with_acknowledgement(call: FunctionCall) -> list[Item]:
    """An asynchronous call as the model reads it: the call, then the acknowledgement as its result."""
    return [call, FunctionCallOutput(id=None, call_id=call.call_id, output=ACKNOWLEDGEMENT, status="completed")]


def answer_read_late(output: FunctionCallOutput | CustomToolCallOutput, context: Replay) -> list[Item] | None:
    """The client's result of an asynchronous call as a user message naming the call (its place after
    the call holds the acknowledgement), its images and files kept; None for the result of a call
    that waited for it."""
    call = context.asynchronous_calls.get(output.call_id)
    if call is None:
        return None
    name = getattr(call, "name", "the tool")
    header = InputText(text=f"The result of the asynchronous call {output.call_id} ({name}) has arrived:")
    parts = [InputText(text=output.output)] if isinstance(output.output, str) else list(output.output)
    # ``answers_call``: backends that read structure (the simulator) see which call it answers.
    return [Message(id=new_id("msg"), role="user", content=[header, *parts], status="completed",
                    answers_call=output.call_id)]  # fmt: skip
