"""OpenAI's attribute filters (``ComparisonFilter`` and ``CompoundFilter``), applied to a file's
attributes in a vector store: ``{"type": "eq", "key", "value"}`` (``ne``, ``gt``, ``gte``, ``lt``,
``lte``, ``in``, ``nin``) and ``{"type": "and" | "or", "filters": [...]}``."""

from __future__ import annotations

import operator
from collections.abc import Callable, Mapping
from typing import Any

from responsa.protocol import InvalidRequest

__all__ = ["check_filter", "matches"]

_COMPARE: dict[str, Callable[[Any, Any], bool]] = {
    "eq": operator.eq, "ne": operator.ne, "gt": operator.gt, "gte": operator.ge, "lt": operator.lt, "lte": operator.le,
    "in": lambda value, wanted: value in wanted, "nin": lambda value, wanted: value not in wanted,
}  # fmt: skip


def check_filter(spec: Any, param: str = "filters") -> None:
    """400 naming the part of ``spec`` that is not a filter."""
    if not isinstance(spec, Mapping) or spec.get("type") not in (*_COMPARE, "and", "or"):
        raise InvalidRequest(f"Invalid '{param}': expected a comparison or compound filter.", param=param)
    if spec["type"] in ("and", "or"):
        filters = spec.get("filters")
        if not isinstance(filters, list):
            raise InvalidRequest(f"Invalid '{param}.filters': expected a list of filters.", param=f"{param}.filters")
        for index, inner in enumerate(filters):
            check_filter(inner, f"{param}.filters[{index}]")
    elif not isinstance(spec.get("key"), str) or "value" not in spec:
        raise InvalidRequest(f"Invalid '{param}': a comparison filter needs 'key' and 'value'.", param=param)


def matches(spec: Mapping[str, Any], attributes: Mapping[str, Any]) -> bool:
    """Whether ``attributes`` pass ``spec``; a missing key or values that do not compare fail it."""
    kind = spec["type"]
    if kind == "and":
        return all(matches(inner, attributes) for inner in spec["filters"])
    if kind == "or":
        return any(matches(inner, attributes) for inner in spec["filters"])
    if spec["key"] not in attributes:
        return kind in ("ne", "nin")
    try:
        return bool(_COMPARE[kind](attributes[spec["key"]], spec["value"]))
    except TypeError:
        return False
