"""Tool calls in each model family's own words, found in streamed text.

A GGUF's chat template says how its model was taught to call tools: Hermes and Qwen write
``<tool_call>{"name": …, "arguments": …}</tool_call>``; Llama 3.x writes a bare JSON object with
``parameters`` (after ``<|python_tag|>`` for some); Mistral writes ``[TOOL_CALLS]`` then a JSON list
(or, from its v11 tokenizer on, ``name[ARGS]{…}``). Anything else is read with a JSON fallback: an
answer that is nothing but calls as JSON. Text around the calls streams through unchanged, and a
block that does not parse as calls of known tools is given back as text.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

from responsa.backends._stops import partial_suffix
from responsa.protocol import FunctionTool

__all__ = [
    "HERMES",
    "JSON_ONLY",
    "LLAMA3",
    "MISTRAL",
    "ArgumentsDelta",
    "CallOpened",
    "CallParser",
    "ParsedCall",
    "Piece",
    "ToolFormat",
    "detect_format",
    "whole_calls",
]


@dataclass(frozen=True)
class ParsedCall:
    """A whole call, read once its block ended (it could not be streamed)."""

    name: str
    arguments: str


@dataclass(frozen=True)
class CallOpened:
    """A call of ``name`` has begun; its arguments follow as :class:`ArgumentsDelta` pieces."""

    name: str


@dataclass(frozen=True)
class ArgumentsDelta:
    text: str


Piece = str | ParsedCall | CallOpened | ArgumentsDelta
"""What the parser gives: answer text, or calls (streamed in pieces where the format allows)."""


def whole_calls(pieces: list[Piece]) -> list[ParsedCall]:
    """The calls in ``pieces``, each streamed call put back together."""
    calls: list[ParsedCall] = []
    for piece in pieces:
        if isinstance(piece, ParsedCall | CallOpened):
            calls.append(ParsedCall(piece.name, piece.arguments if isinstance(piece, ParsedCall) else ""))
        elif isinstance(piece, ArgumentsDelta) and calls:
            calls[-1] = ParsedCall(calls[-1].name, calls[-1].arguments + piece.text)
    return calls


@dataclass(frozen=True)
class ToolFormat:
    name: Literal["hermes", "llama3", "mistral", "json"]
    opener: str | None
    """What starts a block of calls in running text (None: only an answer that is all JSON is read)."""
    closer: str | None
    """What ends one (None: the block runs to the end of the output)."""
    arguments_key: str = "arguments"
    forced_gbnf: str = "tool-call"
    """How a forced call is written, in GBNF around the rule ``tool-call`` (one call as JSON)."""

    def call_schema(self, tools: Sequence[FunctionTool]) -> dict[str, Any]:
        """A JSON schema whose instances are exactly the valid calls of one of ``tools``, as this format
        writes one call (``{"name": …, "arguments": …}``; Llama 3 says ``parameters``)."""
        options = [
            {
                "type": "object",
                "properties": {"name": {"const": tool.name}, self.arguments_key: tool.parameters or {"type": "object"}},
                "required": ["name", self.arguments_key],
            }
            for tool in tools
        ]
        return options[0] if len(options) == 1 else {"anyOf": options}

    def wrap_gbnf(self, call: str) -> str:
        """A grammar for one call in this format's words, from ``call``, a grammar for its JSON."""
        renamed = re.sub(r"^root ::=", "tool-call ::=", call, count=1, flags=re.MULTILINE)
        return f"root ::= {self.forced_gbnf}\n{renamed}"


HERMES = ToolFormat("hermes", "<tool_call>", "</tool_call>", forced_gbnf='"<tool_call>\\n" tool-call "\\n</tool_call>"')
LLAMA3 = ToolFormat("llama3", "<|python_tag|>", None, arguments_key="parameters")
MISTRAL = ToolFormat("mistral", "[TOOL_CALLS]", None, forced_gbnf='"[TOOL_CALLS][" tool-call "]"')
JSON_ONLY = ToolFormat("json", None, None)


def detect_format(template: str) -> ToolFormat:
    """The format a chat template teaches, by the markers it writes (as llama.cpp's server does)."""
    if "<tool_call>" in template:
        return HERMES
    if "[TOOL_CALLS]" in template:
        return MISTRAL
    if "<|python_tag|>" in template or ("<|start_header_id|>" in template and "parameters" in template):
        return LLAMA3
    return JSON_ONLY


_CALL_HEAD = re.compile(
    r"(?:\s*\}\s*[,;]?)?\s*(?:\[TOOL_CALLS\]|<\|python_tag\|>)?\s*\[?\s*"
    r'(?:\{\s*"name"\s*:\s*"(?P<name>[^"\\]+)"\s*,\s*"(?:arguments|parameters)"\s*:\s*|(?P<bare>[A-Za-z_][\w.-]*)\[ARGS\])'
    r"(?=\{)"
)
"""Where a call's arguments object begins: after its name in JSON (name first, as models write it), or
after Mistral's ``name[ARGS]``; a later call of the same block after the previous one's ``}``."""


class _ArgumentsStream:
    """Streams the arguments of the calls in one block as they are written: from the ``{`` after a
    call's head to the ``}`` that closes it (strings and nesting followed), verbatim."""

    def __init__(self) -> None:
        self.cursor = 0
        self.calls = 0
        self.open = False
        self.stuck = False
        """The block does not start as a call of a known tool: read whole at its end instead."""
        self._depth = 0
        self._in_string = False
        self._escape = False

    def advance(self, block: str, names: set[str], out: list[Piece]) -> None:
        while not self.stuck:
            if not self.open:
                head = _CALL_HEAD.match(block, self.cursor)
                if head is None:
                    return  # not there yet (or never: then the block is read whole)
                name = head["name"] or head["bare"]
                if name not in names:
                    self.stuck = self.calls == 0
                    return
                out.append(CallOpened(name))
                self.calls += 1
                self.open, self.cursor = True, head.end()
            end = self._object_end(block)
            if block[self.cursor : end or len(block)]:
                out.append(ArgumentsDelta(block[self.cursor : end or len(block)]))
            self.cursor = end or len(block)
            if end is None:
                return
            self.open = False

    def _object_end(self, block: str) -> int | None:
        """Just past the ``}`` closing the arguments object, or None when it is not written yet."""
        for at in range(self.cursor, len(block)):
            char = block[at]
            if self._in_string:
                if self._escape:
                    self._escape = False
                elif char == "\\":
                    self._escape = True
                elif char == '"':
                    self._in_string = False
            elif char == '"':
                self._in_string = True
            elif char in "{[":
                self._depth += 1
            elif char in "}]":
                self._depth -= 1
                if self._depth == 0:
                    return at + 1
        return None


class CallParser:
    """Streams text through and takes calls of ``tool_names`` out of it, in ``fmt``'s words. A call
    whose name comes first has its arguments streamed as they are written; any other is read whole
    when its block ends."""

    def __init__(self, fmt: ToolFormat, tool_names: set[str]) -> None:
        self._fmt = fmt
        self._names = tool_names
        self._pending = ""
        self._state: Literal["start", "text", "block", "bare"] = "start"
        self._stream = _ArgumentsStream()

    def feed(self, text: str) -> list[Piece]:
        out: list[Piece] = []
        buffer = self._pending + text
        self._pending = ""
        while buffer:
            if self._state == "start":
                stripped = buffer.lstrip()
                if not stripped:
                    self._pending = buffer
                    break
                # An answer that opens with JSON may be all calls: held back until the end to be read whole.
                self._state = "bare" if stripped[0] in "{[" else "text"
            if self._state == "bare" or (self._state == "block" and self._fmt.closer is None):
                self._pending = buffer
                self._stream.advance(buffer, self._names, out)
                break
            marker = self._fmt.closer if self._state == "block" else self._fmt.opener
            at = buffer.find(marker) if marker else -1
            if at < 0:
                keep = partial_suffix(buffer, marker) if marker else 0
                if self._state == "text":
                    _text(out, buffer[: len(buffer) - keep])
                    self._pending = buffer[len(buffer) - keep :]
                else:
                    self._pending = buffer
                    self._stream.advance(buffer, self._names, out)
                break
            if self._state == "text":
                _text(out, buffer[:at])
                self._state = "block"
            else:
                out += self._block(buffer[:at], closed=True)
                self._state = "text"
            buffer = buffer[at + len(marker or "") :]
        return out

    def flush(self) -> list[Piece]:
        pending, self._pending = self._pending, ""
        if self._state == "block":
            return self._block(pending, closed=False)
        if self._state == "bare":
            return self._block(pending, closed=False, bare=True)
        return [pending] if pending else []

    def _block(self, body: str, closed: bool, bare: bool = False) -> list[Piece]:
        """The end of a block: the rest of its streamed calls, or its calls read whole, or its text."""
        out: list[Piece] = []
        self._stream.advance(body, self._names, out)
        streamed, self._stream = self._stream.calls, _ArgumentsStream()
        if streamed:
            return out  # what follows the last call's arguments closes it (a brace, the list)
        calls = self._calls(body.strip().removeprefix(self._fmt.opener or "") if bare else body)
        if calls is not None:
            return list(calls)
        if bare:
            return [body]
        return [f"{self._fmt.opener}{body}{self._fmt.closer if closed else ''}"]

    def _calls(self, body: str) -> list[ParsedCall] | None:
        """The calls ``body`` holds, or None unless it is nothing but calls of known tools."""
        body = body.strip()
        if self._fmt is MISTRAL and "[ARGS]" in body:
            return self._named_calls(body)
        decoder = json.JSONDecoder()
        calls: list[ParsedCall] = []
        at = 0
        while at < len(body):
            try:
                value, at = decoder.raw_decode(body, at)
            except json.JSONDecodeError:
                return None
            for entry in value if isinstance(value, list) else [value]:
                call = self._call(entry)
                if call is None:
                    return None
                calls.append(call)
            at = _skip_separators(body, at)
        return calls or None

    def _named_calls(self, body: str) -> list[ParsedCall] | None:
        """Mistral's v11 form: ``name[ARGS]{…}``, one after another (each after ``[TOOL_CALLS]``)."""
        calls = []
        for part in body.split(MISTRAL.opener or ""):
            name, _, arguments = part.strip().partition("[ARGS]")
            try:
                parsed = json.loads(arguments)
            except json.JSONDecodeError:
                return None
            call = self._call({"name": name, "arguments": parsed})
            if call is None:
                return None
            calls.append(call)
        return calls

    def _call(self, entry: Any) -> ParsedCall | None:
        if not isinstance(entry, dict) or entry.get("name") not in self._names:
            return None
        arguments = entry.get("arguments", entry.get("parameters", {}))
        if isinstance(arguments, str):
            try:
                arguments = json.loads(arguments)
            except json.JSONDecodeError:
                return None
        if not isinstance(arguments, dict):
            return None
        return ParsedCall(str(entry["name"]), json.dumps(arguments, ensure_ascii=False))


_SEPARATORS = re.compile(r"[\s;,]*")


def _skip_separators(text: str, at: int) -> int:
    """Past what models write between calls (Llama 3.2: ``; ``, others a newline)."""
    found = _SEPARATORS.match(text, at)
    return found.end() if found else at


def _text(out: list[Piece], text: str) -> None:
    if text:
        out.append(text)
