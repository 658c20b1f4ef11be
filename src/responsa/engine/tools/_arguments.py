"""Reading a model's JSON arguments leniently: a call whose arguments are not what its schema says
still becomes an item (with what could be read), never an error."""

from __future__ import annotations

import json
from typing import Any

__all__ = ["as_int", "as_object", "as_strings"]


def as_object(arguments: str) -> dict[str, Any]:
    try:
        value = json.loads(arguments or "{}")
    except json.JSONDecodeError:
        return {}
    return value if isinstance(value, dict) else {}


def as_strings(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value]
    return [str(entry) for entry in value] if isinstance(value, list) else []


def as_int(value: Any) -> int | None:
    return int(value) if isinstance(value, int | float) and not isinstance(value, bool) else None
