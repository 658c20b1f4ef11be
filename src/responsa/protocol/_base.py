"""Shared base for wire models: unknown fields are kept so they round-trip, never rejected."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, SerializerFunctionWrapHandler, model_serializer

__all__ = ["WireModel", "WirePart"]


class WireModel(BaseModel):
    """A JSON object of the API; extra (vendor or future) fields are accepted and preserved."""

    model_config = ConfigDict(extra="allow", populate_by_name=True)


class WirePart(WireModel):
    """An item or content part: absent optional fields are omitted rather than sent as null."""

    @model_serializer(mode="wrap")
    def _drop_nulls(self, handler: SerializerFunctionWrapHandler) -> Any:
        data = handler(self)
        if isinstance(data, dict):
            return {key: value for key, value in data.items() if value is not None}
        return data
