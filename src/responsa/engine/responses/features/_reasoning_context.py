"""A create's ``reasoning.context`` (openai 3.57): which reasoning items of earlier turns the model
reads back.

``current_turn`` shows the reasoning since the last user message (the turn the model is in, its own
tool loop included); ``all_turns`` shows all of it (Codex's Responses Lite asks for it, to keep the
prompt a stable prefix). The model request says so (``ModelRequest.reads_reasoning``) with only those
reasoning items in it, and each backend renders them where its model has a place for them (see
docs/api.md). ``auto``, or none given: the backend's default, which here is none shown (no backend's
model reads reasoning back unless asked), so the feature is not opened.
"""

from __future__ import annotations

from collections.abc import Sequence

from responsa.backends import ModelRequest
from responsa.protocol import CreateResponseRequest, Item, Message, Reasoning, ResponseObject

from ._features import FeatureRun

__all__ = ["ReasoningContextFeature"]


class ReasoningContextFeature:
    """``reasoning.context``: ``current_turn`` or ``all_turns``."""

    name = "reasoning.context"
    items: frozenset[type] = frozenset()
    fields: frozenset[str] = frozenset({"reasoning"})

    def open(self, request: CreateResponseRequest, context_types: frozenset[type]) -> FeatureRun | None:
        context = request.reasoning.context if request.reasoning is not None else None
        if context not in ("current_turn", "all_turns"):
            return None
        return _ReasoningContextRun(context)


class _ReasoningContextRun(FeatureRun):
    def __init__(self, context: str) -> None:
        self._context = context
        self._all_turns = context == "all_turns"

    def begin(self, response: ResponseObject) -> None:
        response.reasoning.context = self._context  # the mode in effect, as OpenAI echoes it

    def shape(self, model: ModelRequest, input_items: Sequence[Item]) -> None:
        model.reads_reasoning = True
        if not self._all_turns:
            model.items = _since_last_user_message(model.items)


def _since_last_user_message(items: Sequence[Item]) -> list[Item]:
    """``items`` without the reasoning before the last user message (the earlier turns')."""
    last = 0
    for index, item in enumerate(items):
        if isinstance(item, Message) and item.role == "user":
            last = index
    return [item for index, item in enumerate(items) if index >= last or not isinstance(item, Reasoning)]
