"""Shared base for wire models: unknown fields are kept so they round-trip, never rejected."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict

__all__ = ["WireModel", "WirePart"]


class WireModel(BaseModel):
    """A JSON object of the API; extra (vendor or future) fields are accepted and preserved."""

    model_config = ConfigDict(extra="allow", populate_by_name=True)


def _is_none(value: Any) -> bool:
    return value is None


class WirePart(WireModel):
    """An item or content part: absent optional fields are omitted rather than sent as null.

    Each field of a subclass is marked to be left out when None, so that pydantic's own serializer
    drops it (a serializer in Python, wrapped around each item and part, cost twice the dump)."""

    @classmethod
    def __pydantic_init_subclass__(cls, **kwargs: Any) -> None:
        super().__pydantic_init_subclass__(**kwargs)
        fields = [field for field in cls.model_fields.values() if field.exclude_if is None]
        if fields:
            for field in fields:
                field.exclude_if = _is_none
            cls.model_rebuild(force=True)
