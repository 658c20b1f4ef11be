"""What every stream event is (``sequence_number``), and a piece of a call's input as it streams."""

from __future__ import annotations

from typing import Self

from ._base import WireModel, new_model

__all__ = ["Event", "PieceDelta"]


class Event(WireModel):
    sequence_number: int = 0
    """Position in the stream, from 0 and contiguous; set when the event is emitted."""


class PieceDelta(Event):
    """A piece of a call's input as the model writes it (arguments, a custom tool's input, code): one
    a token. Each kind names its own ``type``."""

    type: str
    item_id: str
    output_index: int
    delta: str

    @classmethod
    def of_token(cls, item_id: str, output_index: int, delta: str) -> Self:
        """One token's piece, without validation (see :func:`.new_model`)."""
        fields = {"sequence_number": 0, "type": cls.__pydantic_fields__["type"].default, "item_id": item_id,
                  "output_index": output_index, "delta": delta}  # fmt: skip
        return new_model(cls, fields, {"item_id", "output_index", "delta"}, {})
