"""Reasoning items in a response's output: the events of their text and summary parts as they stream, and closed."""

from __future__ import annotations

from responsa.protocol import (
    ContentPartEvent,
    Reasoning,
    ReasoningSummaryPartEvent,
    ReasoningSummaryTextDelta,
    ReasoningSummaryTextDone,
    ReasoningText,
    ReasoningTextDelta,
    ReasoningTextDone,
    StreamEvent,
    SummaryText,
)

from ._emitter import Where

__all__ = ["close_reasoning", "reasoning_delta"]


def reasoning_delta(where: Where, chunks: list[str], text: str, summary: bool) -> list[StreamEvent]:
    """``text`` added to ``chunks`` (the item's text or its summary so far); the part opens first.

    Raw reasoning text is content part 0, a summary is summary part 0."""
    events: list[StreamEvent] = []
    if not chunks:
        events.append(
            ReasoningSummaryPartEvent(
                type="response.reasoning_summary_part.added", summary_index=0, part=SummaryText(text=""), **where
            )
            if summary
            else ContentPartEvent(
                type="response.content_part.added", content_index=0, part=ReasoningText(text=""), **where
            )
        )
    chunks.append(text)
    made = ReasoningSummaryTextDelta.of_token if summary else ReasoningTextDelta.of_token
    events.append(made(where["item_id"], where["output_index"], text))
    return events


def close_reasoning(
    item: Reasoning, where: Where, chunks: list[str], summary_chunks: list[str], summary_asked: bool = False
) -> list[StreamEvent]:
    """Fill ``item`` with what streamed and close the parts that were opened. Where a summary was asked
    (``reasoning.summary``) and the model wrote its reasoning but no summary (a thinking model behind
    an upstream, the embedded model), the reasoning text itself is the summary, with the summary's
    events (added, one delta, done) here at the item's end: no summariser runs."""
    events: list[StreamEvent] = []
    if summary_asked and chunks and not summary_chunks:
        events += reasoning_delta(where, summary_chunks, "".join(chunks), summary=True)
    if chunks:
        part = ReasoningText(text="".join(chunks))
        item.content = [part]
        events.append(ReasoningTextDone(content_index=0, text=part.text, **where))
        events.append(
            ContentPartEvent(type="response.content_part.done", content_index=0, part=part.model_copy(), **where)
        )
    if summary_chunks:
        summary = SummaryText(text="".join(summary_chunks))
        item.summary = [summary]
        events.append(ReasoningSummaryTextDone(summary_index=0, text=summary.text, **where))
        events.append(
            ReasoningSummaryPartEvent(
                type="response.reasoning_summary_part.done", summary_index=0, part=summary.model_copy(), **where
            )
        )
    return events
