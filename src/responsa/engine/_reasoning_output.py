"""Reasoning items in a response's output: their text and summary parts as they stream, and closed."""

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

from ._emitter import Emitter

__all__ = ["ReasoningOutput"]


class ReasoningOutput(Emitter):
    """The events of a reasoning item: raw reasoning text is content part 0, a summary is summary part 0."""

    def _reasoning_delta(
        self, item: Reasoning, output_index: int, chunks: list[str], text: str, summary: bool
    ) -> list[StreamEvent]:
        """``text`` added to ``chunks`` (the item's text or its summary so far); the part opens first."""
        where = {"item_id": item.id or "", "output_index": output_index}
        events: list[StreamEvent] = []
        if not chunks:
            added: StreamEvent = (
                ReasoningSummaryPartEvent(
                    type="response.reasoning_summary_part.added", summary_index=0, part=SummaryText(text=""), **where
                )
                if summary
                else ContentPartEvent(
                    type="response.content_part.added", content_index=0, part=ReasoningText(text=""), **where
                )
            )
            events.append(self._emit(added))
        chunks.append(text)
        delta: StreamEvent = (
            ReasoningSummaryTextDelta(summary_index=0, delta=text, **where)
            if summary
            else ReasoningTextDelta(content_index=0, delta=text, **where)
        )
        events.append(self._emit(delta))
        return events

    def _close_reasoning(
        self, item: Reasoning, output_index: int, chunks: list[str], summary_chunks: list[str]
    ) -> list[StreamEvent]:
        """Fill ``item`` with what streamed and close the parts that were opened."""
        events: list[StreamEvent] = []
        where = {"item_id": item.id or "", "output_index": output_index}
        if chunks:
            part = ReasoningText(text="".join(chunks))
            item.content = [part]
            events.append(self._emit(ReasoningTextDone(content_index=0, text=part.text, **where)))
            events.append(
                self._emit(
                    ContentPartEvent(
                        type="response.content_part.done", content_index=0, part=part.model_copy(), **where
                    )
                )
            )
        if summary_chunks:
            summary = SummaryText(text="".join(summary_chunks))
            item.summary = [summary]
            events.append(self._emit(ReasoningSummaryTextDone(summary_index=0, text=summary.text, **where)))
            events.append(
                self._emit(
                    ReasoningSummaryPartEvent(
                        type="response.reasoning_summary_part.done", summary_index=0, part=summary.model_copy(), **where
                    )
                )
            )
        return events
