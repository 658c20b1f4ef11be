"""The Open Responses OpenAPI document, as the ``llm-comply`` package ships it, for validating what we send.

One known defect of the document is corrected here, not in our output: it types an echoed
``text.format.schema`` as ``null`` only (its generator dropped the object branch), while the OpenAI
SDK types it as an object and a structured-output response must echo the schema it was given.
"""

from __future__ import annotations

import functools
import pathlib
from typing import Any

import llm_comply
from llm_comply.schema import SpecLoader
from openai.types.responses import ResponseOutputItem
from pydantic import TypeAdapter, ValidationError

SPEC_PATH = pathlib.Path(llm_comply.__file__).parent / "specs" / "openresponses.json"

OPENAI_ONLY_EVENTS = frozenset({"response.reasoning_text.delta", "response.reasoning_text.done"})
"""OpenAI's names for what the document calls ``response.reasoning.delta/done`` (same fields)."""


@functools.cache
def spec() -> SpecLoader:
    loader = SpecLoader(str(SPEC_PATH))
    fmt = loader.get_schema("JsonSchemaResponseFormat")
    assert fmt is not None
    fmt["properties"]["schema"] = {"anyOf": [{"type": "object"}, {"type": "null"}]}
    return loader


@functools.cache
def event_schemas() -> dict[str, str]:
    """Event type -> schema name, read from the document's ``*StreamingEvent`` schemas (llm-comply's own
    table misnames the reasoning summary events)."""
    table: dict[str, str] = {}
    for name in spec().schema_names:
        schema = spec().get_schema(name) or {}
        kinds = schema.get("properties", {}).get("type", {}).get("enum", [])
        if name.endswith("StreamingEvent") and len(kinds) == 1:
            table[kinds[0]] = name
    return table


def response_errors(body: dict[str, Any]) -> list[str]:
    """What is wrong with a response object, by the document's ``ResponseResource``."""
    return spec().validate(body, "ResponseResource")


def hosted_call_errors(body: dict[str, Any], call: dict[str, Any]) -> list[str]:
    """What is wrong with a response holding a hosted tool's call: the openai package's output item
    type for each of its items, and the document's ``ResponseResource`` for the rest. The document's unions have no
    hosted tool, call item, tool choice naming one or file citation (the upstream suite's
    ``file-search`` and ``offline-web-search`` tests check those by type only), so it reads the
    response without them: the call left out of the output, its tool out of the tools, a tool choice
    naming it as ``required``, only URL citations kept."""
    try:
        for item in body["output"]:
            TypeAdapter(ResponseOutputItem).validate_python(item)
    except ValidationError as invalid:
        return [f"openai output item: {invalid}"]
    hosted = call["type"].removesuffix("_call")
    choice = body.get("tool_choice")
    output = [_url_citations_only(item) for item in body["output"] if item is not call]
    rest = {**body, "output": output, "tools": [tool for tool in body.get("tools") or () if tool["type"] != hosted],
            "tool_choice": "required" if isinstance(choice, dict) and choice.get("type") == hosted else choice}  # fmt: skip
    return response_errors(rest)


def _url_citations_only(item: dict[str, Any]) -> dict[str, Any]:
    if item["type"] != "message":
        return item
    parts = [{**part, "annotations": [note for note in part.get("annotations", ()) if note["type"] == "url_citation"]}
             if part["type"] == "output_text" else part for part in item["content"]]  # fmt: skip
    return {**item, "content": parts}


def event_errors(event: dict[str, Any]) -> list[str]:
    """What is wrong with one stream event (SSE or WebSocket), by the document's schema for its type."""
    kind = event["type"]
    if kind in OPENAI_ONLY_EVENTS:
        kind = kind.replace("reasoning_text", "reasoning")
    name = event_schemas().get(kind)
    if name is None:
        return [f"{kind}: not an event of the specification"]
    return [f"{kind}: {error}" for error in spec().validate(event, name)]


def openai_event(event: dict[str, Any]) -> Any:
    """``event`` read as the openai package's stream event of its type (a ``ValidationError`` if it is
    not one): for events and fields OpenAI has and the Open Responses document does not (compaction,
    custom tools)."""
    import typing

    from openai.types.responses import ResponseStreamEvent

    union = typing.get_args(typing.get_args(ResponseStreamEvent)[0])
    by_type = {typing.get_args(kind.model_fields["type"].annotation)[0]: kind for kind in union}
    return by_type[event["type"]].model_validate(event)


def error_body_errors(body: dict[str, Any]) -> list[str]:
    """What is wrong with an HTTP error body (``{"error": {...}}``), by the document's ``ErrorPayload``."""
    if set(body) != {"error"}:
        return [f"an error body has exactly one key, 'error': {sorted(body)}"]
    return spec().validate(body["error"], "ErrorPayload")
