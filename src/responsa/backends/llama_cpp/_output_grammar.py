"""The grammar one request's output is held to (llama.cpp GBNF), built from its tools and format."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from responsa.backends._base import ModelRequest
from responsa.protocol import InvalidRequest, JsonObjectFormat, JsonSchemaFormat

from ._grammars import GrammarUnsupported, lark_to_gbnf, regex_to_gbnf
from ._template import ChatTemplate
from ._tool_formats import JSON_ONLY, ToolFormat

if TYPE_CHECKING:
    from llama_cpp.llama_grammar import LlamaGrammar

__all__ = ["forces_call", "output_grammar"]


def forces_call(request: ModelRequest) -> bool:
    """Whether the output must be a tool call (a named tool, or any tool under ``required``)."""
    return request.forced_tool is not None or (request.tool_mode == "required" and bool(request.callable_tools()))


def forced_schema(request: ModelRequest, fmt: ToolFormat = JSON_ONLY) -> dict[str, Any] | None:
    """The schema generation must follow when a tool call is mandatory (a named tool's arguments, or
    a call of any tool as ``fmt`` writes it), else None."""
    if request.forced_tool is not None:
        tool = next(t for t in request.tools if t.name == request.forced_tool)
        return tool.parameters or {"type": "object"}
    return fmt.call_schema(request.callable_tools()) if forces_call(request) else None


def _custom_grammar(request: ModelRequest) -> LlamaGrammar | None:
    """The grammar of the custom tool the model must call, if it has one; 400 if it cannot be enforced."""
    from llama_cpp.llama_grammar import LlamaGrammar

    found = request.tool_grammars.get(request.forced_tool or "")
    if found is None:
        return None
    syntax, definition = found
    try:
        gbnf = lark_to_gbnf(definition) if syntax == "lark" else regex_to_gbnf(definition)
        return LlamaGrammar.from_string(gbnf, verbose=False)
    except (GrammarUnsupported, ValueError, RuntimeError) as exc:
        raise InvalidRequest(
            f"The grammar of custom tool '{request.forced_tool}' cannot be enforced by the embedded model: {exc}",
            param="tools",
            code="unsupported_grammar",
        ) from exc


def output_grammar(request: ModelRequest, template: ChatTemplate) -> LlamaGrammar | None:
    """What the output must follow: a custom tool's grammar, a forced call (a required call in the
    model's own words when its template knows tools), or ``text.format``'s schema; None: free text."""
    from llama_cpp.llama_grammar import JSON_GBNF, LlamaGrammar

    if (custom := _custom_grammar(request)) is not None:
        return custom
    forced = forced_schema(request, template.tool_format if template.knows_tools else JSON_ONLY)
    try:
        if forced is not None:
            gbnf = _schema_gbnf(forced)
            if request.forced_tool is None and template.knows_tools:  # a required call, in the model's words
                gbnf = template.tool_format.wrap_gbnf(gbnf)
            return LlamaGrammar.from_string(gbnf, verbose=False)
        fmt = request.text_format
        if isinstance(fmt, JsonSchemaFormat):
            return LlamaGrammar.from_string(_schema_gbnf(fmt.schema_), verbose=False)
        if isinstance(fmt, JsonObjectFormat):
            return LlamaGrammar.from_string(JSON_GBNF, verbose=False)
    except (ValueError, RuntimeError) as exc:
        raise InvalidRequest(f"The schema cannot be enforced by a grammar: {exc}", param="text.format") from exc
    return None


def _schema_gbnf(schema: dict[str, Any]) -> str:
    """GBNF for JSON valid for ``schema``. llama-cpp-python's converter lets a string hold raw control
    characters (a newline), which JSON forbids; llama.cpp's own converter keeps them out, as here."""
    from llama_cpp.llama_grammar import json_schema_to_gbnf

    gbnf: str = json_schema_to_gbnf(json.dumps(schema))
    return gbnf.replace('char ::= [^"\\\\] |', 'char ::= [^"\\\\\\x7F\\x00-\\x1F] |')
