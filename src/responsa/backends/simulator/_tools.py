"""How the simulator decides which tools to call, and with which arguments."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

from responsa.backends._base import ModelRequest
from responsa.protocol import FunctionTool, ModelError

from ._schema import Hints, instance_for
from ._text import entities, keywords, stem

__all__ = ["PlannedCall", "plan_tool_calls"]

_CAMEL = re.compile(r"(?<=[a-z])(?=[A-Z])")


@dataclass(frozen=True)
class PlannedCall:
    name: str
    arguments: str


def plan_tool_calls(request: ModelRequest, prompt: str, answering_tool_output: bool) -> list[PlannedCall]:
    """The calls a model would make for ``prompt`` under ``request``'s tool policy; [] to answer."""
    tools = request.callable_tools()
    if request.tool_mode == "none" or not tools or request.max_tool_calls == 0:
        return []
    if request.forced_tool is not None:
        chosen = [tool for tool in tools if tool.name == request.forced_tool][:1]
    else:
        scored = sorted(
            ((score, index, tool) for index, tool in enumerate(tools) if (score := _relevance(tool, prompt))),
            key=lambda entry: (-entry[0], entry[1]),
        )
        chosen = [tool for _, _, tool in scored]
        if request.tool_mode == "auto" and answering_tool_output:
            return []
        if request.tool_mode == "required" and not chosen:
            chosen = tools[:1]
    if not request.parallel_tool_calls:
        chosen = chosen[:1]
    calls = [call for tool in chosen for call in _calls_for(tool, prompt, request.parallel_tool_calls)]
    if not request.parallel_tool_calls:
        calls = calls[:1]
    if request.max_tool_calls is not None:
        calls = calls[: request.max_tool_calls]
    return calls


def _tool_words(tool: FunctionTool) -> tuple[set[str], set[str]]:
    name_words = {stem(w) for w in re.split(r"[_\-\s.]+", _CAMEL.sub("_", tool.name)) if len(w) > 2}
    name_words -= {"get", "set", "fetch", "lookup", "tool", "function", "run"}
    description_words = {stem(w) for w in keywords(tool.description or "")}
    return name_words, description_words


def _relevance(tool: FunctionTool, prompt: str) -> int:
    """How strongly the prompt asks for what the tool offers; 0 when it does not."""
    asked = {stem(word) for word in keywords(prompt)}
    name_words, description_words = _tool_words(tool)
    name_hits = len(asked & name_words)
    description_hits = len(asked & description_words)
    if name_hits == 0 and description_hits < 2:
        return 0
    return 2 * name_hits + description_hits


def _entity_parameter(schema: dict[str, Any]) -> bool:
    """True when the tool takes one required string that names a thing (one call per thing)."""
    required = schema.get("required", [])
    properties = schema.get("properties", {})
    strings = [name for name in required if properties.get(name, {}).get("type") == "string"]
    return len(strings) == 1 and "enum" not in properties.get(strings[0], {})


def _calls_for(tool: FunctionTool, prompt: str, parallel: bool) -> list[PlannedCall]:
    import jsonschema  # on first use, as the request checks do

    schema = tool.parameters or {"type": "object", "properties": {}}
    names = entities(prompt)
    targets: list[str | None] = list(names) if parallel and len(names) > 1 and _entity_parameter(schema) else [None]
    calls = []
    for entity in targets:
        arguments = instance_for(schema, Hints(text=prompt, entity=entity, all_properties=False))
        if not isinstance(arguments, dict):
            arguments = {}
        try:
            jsonschema.validate(arguments, schema)
        except jsonschema.ValidationError as exc:
            raise ModelError(f"The simulator could not fill the parameters of {tool.name!r}: {exc.message}") from exc
        calls.append(PlannedCall(tool.name, json.dumps(arguments, separators=(",", ":"))))
    return calls
