"""The output item the builder is writing, and the message's parts: its text (with what the server's
calls gave it to cite) or its refusal. Values and pure functions; ``OutputBuilder`` numbers the events."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

from responsa.protocol import (
    AnnotationAddedEvent,
    ContentPartEvent,
    Item,
    Message,
    OutputText,
    OutputTextDone,
    Refusal,
    RefusalDoneEvent,
    StreamEvent,
    new_id,
    unvalidated,
)

from ...output import Emitter
from ...tools import Annotations, OpenCall, Where

__all__ = ["OpenItem", "ReadyMessage", "closed_message", "message_ahead", "new_message", "refusal_opened"]

ItemEnd = Literal["completed", "incomplete"]
Phase = Literal["commentary", "final_answer"]


@dataclass
class OpenItem:
    """The output item currently receiving deltas."""

    where: Where
    item: Item
    chunks: list[str] = field(default_factory=list)
    """Message text (or its refusal), call arguments or raw reasoning, as it arrives."""
    summary_chunks: list[str] = field(default_factory=list)
    tool_index: int | None = None
    call: OpenCall | None = None
    """For a tool call: its kind's handling of the call as its arguments stream in."""
    logprobs: list[dict[str, Any]] = field(default_factory=list)
    """For a message: each token's log probability, when the request asked for them."""
    refusal: bool = False
    """For a message: the model declined, and its one part is the ``refusal``."""


@dataclass(frozen=True)
class ReadyMessage:
    """A message not yet in the output, and its ``output_item.added`` and ``content_part.added`` (unnumbered;
    none where no one reads the events)."""

    message: Message
    where: Where
    opening: list[StreamEvent]


def new_message() -> Message:
    """An assistant message just begun."""
    return unvalidated(Message, {"id": new_id("msg"), "role": "assistant", "content": [], "status": "in_progress"})


def message_ahead(output_index: int, emitter: Emitter | None) -> ReadyMessage:
    """A message for ``output_index`` with its opening events, made by ``emitter`` (None where no one
    reads the events)."""
    message = new_message()
    where: Where = {"item_id": message.id, "output_index": output_index}
    if emitter is None:
        return ReadyMessage(message, where, [])
    emitter.opening(message)
    added = emitter.item_added(message, output_index)
    part = OutputText(text="", logprobs=[])
    opened = ContentPartEvent(type="response.content_part.added", content_index=0, part=part, **where)
    return ReadyMessage(message, where, [added, opened])


def refusal_opened(where: Where) -> ContentPartEvent:
    """The ``content_part.added`` of a refusal."""
    return ContentPartEvent(type="response.content_part.added", content_index=0, part=Refusal(refusal=""), **where)


def closed_message(
    open_item: OpenItem, annotations: Annotations, status: ItemEnd, phase: Phase | None, read: bool
) -> list[StreamEvent]:
    """Fill the open message with its one part, as it ends; its closing events (unnumbered; none where
    no one reads the events, ``read``)."""
    item, where, text = open_item.item, open_item.where, "".join(open_item.chunks)
    assert isinstance(item, Message)
    if open_item.refusal:
        part: OutputText | Refusal = Refusal(refusal=text)
        closing: list[StreamEvent] = [RefusalDoneEvent(content_index=0, refusal=text, **where)]
    else:
        cited = annotations.for_text(text)
        part = OutputText.model_validate({"text": text, "logprobs": open_item.logprobs, "annotations": cited})
        closing = [*(AnnotationAddedEvent(content_index=0, annotation_index=index, annotation=annotation, **where)
                     for index, annotation in enumerate(cited)),
                   OutputTextDone(content_index=0, text=text, logprobs=open_item.logprobs, **where)]  # fmt: skip
    item.content, item.phase, item.status = [part], phase, status
    if not read:
        return []
    done = ContentPartEvent(type="response.content_part.done", content_index=0, part=part.model_copy(), **where)
    return [*closing, done]
