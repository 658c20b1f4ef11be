"""``configuration_update`` items: settings that change partway through a conversation.

An update in the context (the history or the input) changes the reasoning effort and/or the output
format (``text.format``) of the response being made and of every later one, until a later update
replaces that setting; it wins over the request's own value, as it stands for a decision made in the
conversation. The response echoes the settings it ran with.

A request feature (``_features``) named by the context: a create whose history or input holds an update.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from pydantic import ValidationError

from responsa.protocol import ConfigurationUpdate, CreateResponseRequest, InvalidRequest, Item
from responsa.store import Store

from ._features import FeatureRun

__all__ = ["ConfigurationFeature", "configured"]


class ConfigurationFeature:
    """``configuration_update`` items in a create's context."""

    name = "configuration_update"
    items: frozenset[type] = frozenset({ConfigurationUpdate})
    fields: frozenset[str] = frozenset()

    def open(self, request: CreateResponseRequest, context_types: frozenset[type]) -> FeatureRun | None:
        return _ConfigurationRun() if ConfigurationUpdate in context_types else None


class _ConfigurationRun(FeatureRun):
    async def plan(
        self, store: Store, request: CreateResponseRequest, context: Sequence[Item]
    ) -> CreateResponseRequest:
        return configured(request, context)


def configured(request: CreateResponseRequest, context: Sequence[Item]) -> CreateResponseRequest:
    """``request`` with the settings the context's ``configuration_update`` items leave in effect."""
    effort: Any = None
    text_format: Any = None
    for item in context:
        if isinstance(item, ConfigurationUpdate):
            effort = (item.reasoning or {}).get("effort", effort)
            text_format = (item.text or {}).get("format", text_format)
    changes: dict[str, Any] = {}
    body = request.model_dump(mode="json", include={"reasoning", "text"}, exclude_none=True)
    if effort is not None:
        changes["reasoning"] = {**body.get("reasoning", {}), "effort": effort}
    if text_format is not None:
        changes["text"] = {**body.get("text", {}), "format": text_format}
    if not changes:
        return request
    try:
        return request.revised(changes)
    except ValidationError as exc:
        raise InvalidRequest(
            f"A 'configuration_update' item asks for a setting that is not valid: {exc.errors()[0]['msg']}.",
            param="input",
            code="invalid_value",
        ) from None
