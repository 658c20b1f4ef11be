"""``POST /v1/responses/compact`` and ``POST /v1/responses/input_tokens``: their bodies and replies."""

from __future__ import annotations

from typing import Literal

from ._base import WireModel
from ._items import Item
from ._response import Usage

__all__ = ["CompactionObject", "InputTokensObject"]


class CompactionObject(WireModel):
    """The compacted context: the user's messages verbatim and one ``compaction`` item for the rest."""

    id: str
    object: Literal["response.compaction"] = "response.compaction"
    created_at: int
    output: list[Item]
    usage: Usage


class InputTokensObject(WireModel):
    """How many input tokens a create with the same body would use."""

    object: Literal["response.input_tokens"] = "response.input_tokens"
    input_tokens: int
