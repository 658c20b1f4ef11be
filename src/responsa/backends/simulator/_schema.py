"""Build a JSON value valid against a JSON schema, filled with words from the conversation.

Used for tool-call arguments and for ``text.format: json_schema``. The result is checked with
``jsonschema`` by the caller; this module aims to be valid for the schema features models meet
in practice (types, enums, const, bounds, lengths, formats, ``$ref``, ``anyOf``/``oneOf``/``allOf``).
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import Any

from ._text import entities, keywords, numbers

__all__ = ["Hints", "instance_for"]

_PLACE_WORDS = ("location", "city", "place", "country", "region", "address", "destination", "origin")
_NAME_WORDS = ("name", "person", "user", "author", "title", "company")
_TEXT_WORDS = ("query", "search", "text", "prompt", "message", "topic", "question", "q", "keyword", "term")
_CODE_WORDS = ("cmd", "command", "code", "script", "expression", "patch", "input")
"""Parameters a model fills with a span the user quoted in backticks ("run `ls -la`")."""
_CODE_SPAN = re.compile(r"`([^`]+)`")
_FORMATS = {
    "date": "2026-01-15",
    "date-time": "2026-01-15T12:00:00Z",
    "time": "12:00:00",
    "email": "user@example.com",
    "uri": "https://example.com",
    "url": "https://example.com",
    "uuid": "123e4567-e89b-12d3-a456-426614174000",
    "ipv4": "127.0.0.1",
    "hostname": "example.com",
}


@dataclass
class Hints:
    """What the conversation offers to fill values with."""

    text: str
    entity: str | None = None
    all_properties: bool = True
    """Fill every property of an object (structured output); else, as models call tools, the required
    ones and those the text mentions by name."""
    _used_numbers: int = 0

    def next_number(self, low: float, high: float) -> float | None:
        """The next number mentioned in the text that fits, each used once ("add 2 and 3")."""
        mentioned = self.numbers
        for index in range(self._used_numbers, len(mentioned)):
            if low <= mentioned[index] <= high:
                self._used_numbers = index + 1
                return mentioned[index]
        return None

    @property
    def names(self) -> list[str]:
        return entities(self.text)

    @property
    def code_spans(self) -> list[str]:
        return _CODE_SPAN.findall(self.text)

    @property
    def words(self) -> list[str]:
        return keywords(self.text)

    @property
    def numbers(self) -> list[float]:
        return numbers(self.text)


def instance_for(schema: dict[str, Any] | bool, hints: Hints) -> Any:
    """A value valid against ``schema`` (``root`` supplies ``$defs`` for ``$ref``)."""
    root = schema if isinstance(schema, dict) else {}
    return _value(schema, root, hints, key="", depth=0)


def _resolve(schema: dict[str, Any], root: dict[str, Any]) -> dict[str, Any]:
    seen = 0
    while "$ref" in schema and seen < 32:
        ref = str(schema["$ref"])
        target: Any = root
        for part in ref.removeprefix("#/").split("/") if ref.startswith("#/") else []:
            target = target.get(part, {}) if isinstance(target, dict) else {}
        extra = {k: v for k, v in schema.items() if k != "$ref"}
        schema = {**target, **extra} if isinstance(target, dict) else extra
        seen += 1
    return schema


def _value(schema: dict[str, Any] | bool, root: dict[str, Any], hints: Hints, key: str, depth: int) -> Any:
    if not isinstance(schema, dict):
        return None if schema is False else hints.words[0] if hints.words else "value"
    schema = _resolve(schema, root)
    if "const" in schema:
        return schema["const"]
    if schema.get("enum"):
        return _pick_enum(list(schema["enum"]), hints)
    for combinator in ("anyOf", "oneOf"):
        if schema.get(combinator):
            options = [_resolve(option, root) for option in schema[combinator]]
            usable = [option for option in options if option.get("type") != "null"] or options
            merged = {k: v for k, v in schema.items() if k != combinator}
            return _value({**merged, **usable[0]}, root, hints, key, depth)
    if schema.get("allOf"):
        merged = {k: v for k, v in schema.items() if k != "allOf"}
        for part in schema["allOf"]:
            merged = _merge(merged, _resolve(part, root))
        return _value(merged, root, hints, key, depth)
    kind = _type_of(schema)
    if kind == "object":
        return _object(schema, root, hints, depth)
    if kind == "array":
        return _array(schema, root, hints, key, depth)
    if kind in ("integer", "number"):
        return _number(schema, hints, integer=kind == "integer")
    if kind == "boolean":
        return True
    if kind == "null":
        return None
    return _string(schema, hints, key)


def _merge(left: dict[str, Any], right: dict[str, Any]) -> dict[str, Any]:
    merged = {**left, **right}
    if "properties" in left or "properties" in right:
        merged["properties"] = {**left.get("properties", {}), **right.get("properties", {})}
        merged["required"] = sorted(set(left.get("required", [])) | set(right.get("required", [])))
    return merged


def _type_of(schema: dict[str, Any]) -> str:
    kind = schema.get("type")
    if isinstance(kind, list):
        kind = next((k for k in kind if k != "null"), "null")
    if kind:
        return str(kind)
    if "properties" in schema:
        return "object"
    if "items" in schema:
        return "array"
    return "string"


def _pick_enum(options: list[Any], hints: Hints) -> Any:
    lowered = hints.text.lower()
    for option in options:
        if isinstance(option, str) and option.lower() in lowered:
            return option
    return options[0]


def _object(schema: dict[str, Any], root: dict[str, Any], hints: Hints, depth: int) -> dict[str, Any]:
    properties: dict[str, Any] = schema.get("properties", {})
    required = list(schema.get("required", []))
    if depth >= 4:
        names = required
    elif hints.all_properties:
        names = list(properties)
    else:
        mentioned = hints.text.lower()
        names = [name for name in properties if name in required or name.lower().replace("_", " ") in mentioned]
    result = {name: _value(properties.get(name, {}), root, hints, name, depth + 1) for name in names}
    for name in required:
        if name not in result:
            result[name] = _value(properties.get(name, {}), root, hints, name, depth + 1)
    minimum = int(schema.get("minProperties", 0))
    extra = schema.get("additionalProperties", True)
    index = 0
    while len(result) < minimum and extra is not False:
        result[f"key{index}"] = _value(extra if isinstance(extra, dict) else {}, root, hints, "", depth + 1)
        index += 1
    return result


def _array(schema: dict[str, Any], root: dict[str, Any], hints: Hints, key: str, depth: int) -> list[Any]:
    items = schema.get("items", {})
    prefix = schema.get("prefixItems", [])
    low = int(schema.get("minItems", 0))
    high = int(schema.get("maxItems", max(low, 3)))
    count = min(high, max(low, 1 if depth < 4 else 0))
    values: list[Any] = [_value(item, root, hints, key, depth + 1) for item in prefix[:count]]
    while len(values) < count:
        value = _value(items, root, hints, key, depth + 1)
        if schema.get("uniqueItems") and value in values:
            value = _distinct(value, len(values))
        values.append(value)
    return values


def _distinct(value: Any, index: int) -> Any:
    if isinstance(value, str):
        return f"{value} {index + 1}"
    if isinstance(value, bool):
        return not value
    if isinstance(value, int | float):
        return value + index
    return value


def _number(schema: dict[str, Any], hints: Hints, integer: bool) -> int | float:
    low = schema.get("minimum", -math.inf)
    high = schema.get("maximum", math.inf)
    if "exclusiveMinimum" in schema:
        low = max(low, schema["exclusiveMinimum"] + (1 if integer else 1e-6))
    if "exclusiveMaximum" in schema:
        high = min(high, schema["exclusiveMaximum"] - (1 if integer else 1e-6))
    step = schema.get("multipleOf")
    value = hints.next_number(low, high)
    if value is None:
        value = 1.0 if low <= 1.0 <= high else (low if low != -math.inf else high)
    if step:
        value = math.ceil(value / step) * step
        if value > high:
            value -= step
    if integer:
        value = math.ceil(value) if value != int(value) else int(value)
        return int(min(max(value, math.ceil(low) if low != -math.inf else value), high))
    return int(value) if float(value).is_integer() and abs(value) < 2**53 else float(value)  # models write 10, not 10.0


def _string(schema: dict[str, Any], hints: Hints, key: str) -> str:
    fmt = schema.get("format")
    if isinstance(fmt, str) and fmt in _FORMATS:
        return _FORMATS[fmt]
    lowered = key.lower()
    if hints.code_spans and any(word in lowered for word in _CODE_WORDS):
        text = hints.code_spans[0]
    elif hints.entity and any(word in lowered for word in (*_PLACE_WORDS, *_NAME_WORDS)):
        text = hints.entity
    elif any(word in lowered for word in _PLACE_WORDS + _NAME_WORDS) and hints.names:
        text = hints.names[0]
    elif any(word == lowered or lowered.endswith(word) for word in _TEXT_WORDS) and hints.words:
        text = " ".join(hints.words[:4])
    elif hints.entity:
        text = hints.entity
    else:
        text = " ".join(hints.words[:2]) or "example"
    pattern = schema.get("pattern")
    if isinstance(pattern, str) and not re.search(pattern, text):
        text = next((w for w in [*hints.names, *hints.words] if re.search(pattern, w)), text)
    low = int(schema.get("minLength", 0))
    high = int(schema.get("maxLength", 10_000))
    if len(text) < low:
        text = (text + " ") * (low // max(len(text) + 1, 1) + 1)
    return text[:high] if len(text) > high else text[: max(len(text), low)]
