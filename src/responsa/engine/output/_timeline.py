"""The timing record of a response: what happened when, from the request's arrival to the final save,
kept for every stored response (``GET /v1/responses/{id}/timeline``) to draw a timeline.

Cheap on purpose: a handful of marks per response (a model call, its first output, each output item's
start and end, each MCP call's run, the end), appended to a list and saved as one JSON text with the
response's final state, in the same statement.
"""

from __future__ import annotations

import time
from typing import Any

import orjson

from responsa.protocol import Item, OutputItemEvent, ResponseObject

__all__ = ["Timeline"]


class Timeline:
    """Marks in the order they happened: ``{"at": unix seconds, "event": what, ...details}``."""

    __slots__ = ("marks",)

    def __init__(self) -> None:
        self.marks: list[dict[str, Any]] = [{"at": time.time(), "event": "request.received"}]

    def received_at(self, at: float) -> None:
        """When the request arrived (the record is made a little later, once the response exists)."""
        self.marks[0]["at"] = at

    def mark(self, event: str, **details: Any) -> None:
        self.marks.append({"at": time.time(), "event": event, **details})

    def item(self, event: OutputItemEvent) -> None:
        """An output item started (``output_item.added``) or ended (``output_item.done``)."""
        self.item_at(event.type == "response.output_item.added", event.output_index, event.item)

    def item_at(self, added: bool, output_index: int, item: Item) -> None:
        """``item``, at ``output_index``, started (``added``) or ended: where no event says so."""
        what = "output_item.added" if added else "output_item.done"
        self.mark(what, output_index=output_index, item_type=item.type, item_id=getattr(item, "id", None))

    def ended(self, response: ResponseObject) -> str:
        """Mark the end (status and token counts) and return the whole record as JSON, for the final save."""
        usage = response.usage
        tokens = {"input_tokens": usage.input_tokens, "output_tokens": usage.output_tokens} if usage else {}
        self.mark("response.ended", status=response.status, **tokens)
        return orjson.dumps(self.marks).decode()
