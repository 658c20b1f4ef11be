"""Structured outputs: for many schema shapes, the simulator's JSON validates against the schema."""

from __future__ import annotations

import json
from typing import Any

import jsonschema
import openai
import pytest

SCHEMAS: list[dict[str, Any]] = [
    {"type": "object", "properties": {"n": {"type": "integer", "exclusiveMinimum": 10, "exclusiveMaximum": 12}}},
    {"type": "object", "properties": {"x": {"type": "number", "minimum": 0.5, "maximum": 0.75}}, "required": ["x"]},
    {"type": "object", "properties": {"x": {"type": "number", "multipleOf": 0.25, "minimum": 3.1}}, "required": ["x"]},
    {"type": "object", "properties": {"k": {"const": "fixed"}, "e": {"enum": [3, 4]}}, "required": ["k", "e"]},
    {"type": "object", "properties": {"t": {"type": ["null", "string"], "maxLength": 4}}, "required": ["t"]},
    {"type": "object", "properties": {"s": {"type": "string", "minLength": 40}}, "required": ["s"]},
    {
        "type": "object",
        "properties": {
            "when": {"type": "string", "format": "date-time"},
            "id": {"type": "string", "format": "uuid"},
            "site": {"type": "string", "format": "uri"},
            "at": {"type": "string", "format": "time"},
        },
        "required": ["when", "id", "site", "at"],
    },
    {
        "type": "object",
        "properties": {"tags": {"type": "array", "items": {"type": "integer"}, "minItems": 3, "uniqueItems": True}},
        "required": ["tags"],
    },
    {
        "type": "object",
        "properties": {
            "pair": {
                "type": "array",
                "prefixItems": [{"type": "string"}, {"type": "boolean"}],
                "minItems": 2,
                "maxItems": 2,
            }
        },
        "required": ["pair"],
    },
    {"type": "object", "minProperties": 2, "additionalProperties": {"type": "integer"}},
    {
        "type": "object",
        "properties": {"shape": {"oneOf": [{"$ref": "#/definitions/circle"}, {"type": "null"}]}},
        "required": ["shape"],
        "definitions": {
            "circle": {"type": "object", "properties": {"r": {"type": "number", "minimum": 1}}, "required": ["r"]}
        },
    },
    {
        "type": "object",
        "allOf": [
            {"properties": {"a": {"type": "string"}}, "required": ["a"]},
            {"properties": {"b": {"type": "boolean"}}, "required": ["b"]},
        ],
    },
    {
        "type": "object",
        "properties": {"tree": {"$ref": "#/$defs/node"}},
        "required": ["tree"],
        "$defs": {
            "node": {
                "type": "object",
                "properties": {"v": {"type": "integer"}, "kids": {"type": "array", "items": {"$ref": "#/$defs/node"}}},
                "required": ["v", "kids"],
            }
        },
    },
    {"type": "object", "properties": {"city": {"type": "string", "pattern": "^[A-Z][a-z]+$"}}, "required": ["city"]},
]


@pytest.mark.parametrize("schema", SCHEMAS, ids=[str(i) for i in range(len(SCHEMAS))])
def test_output_validates(app_client: openai.OpenAI, schema: dict[str, Any]) -> None:
    reply = app_client.responses.create(
        model="sim",
        input="Summarise the trip to Vienna with 2 friends on 14 May",
        text={"format": {"type": "json_schema", "name": "out", "schema": schema}},
    )
    jsonschema.validate(json.loads(reply.output_text), schema)
