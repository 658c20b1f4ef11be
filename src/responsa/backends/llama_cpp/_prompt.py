"""Conversation → chat template messages for a local model, and tool calls back out of its text.

Small local models know plain roles and text. Tool calls are written and read in the Hermes/Qwen
style (``<tool_call>{"name": …, "arguments": {…}}</tool_call>``), tool results as
``<tool_response>…</tool_response>`` turns.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from responsa.backends._base import ModelRequest
from responsa.backends._stops import partial_suffix
from responsa.backends.chat_completions import chat_messages
from responsa.protocol import FunctionTool

__all__ = ["ParsedCall", "ToolCallSplitter", "required_call_schema", "template_messages"]

OPEN, CLOSE = "<tool_call>", "</tool_call>"


def template_messages(request: ModelRequest, describe_tools: bool) -> list[dict[str, str]]:
    """Messages with string content only; tool traffic rendered as tagged text."""
    flat: list[dict[str, str]] = []
    for message in chat_messages(request.instructions, request.items):
        role = message["role"]
        if role == "tool":
            flat.append({"role": "user", "content": f"<tool_response>\n{message['content']}\n</tool_response>"})
            continue
        text = message.get("content") or ""
        if not isinstance(text, str):
            text = "\n".join(part.get("text", "") for part in text if part.get("type") == "text")
        for call in message.get("tool_calls") or []:
            function = call["function"]
            payload = json.dumps({"name": function["name"], "arguments": _loads(function["arguments"])})
            text += f"{OPEN}{payload}{CLOSE}"
        flat.append({"role": role, "content": text})
    if describe_tools and request.tools:
        _merge_system(flat, _tool_instructions(request.tools))
    return flat


def _loads(arguments: str) -> Any:
    try:
        return json.loads(arguments)
    except json.JSONDecodeError:
        return arguments


def _tool_instructions(tools: Sequence[FunctionTool]) -> str:
    specs = [{"name": t.name, "description": t.description or "", "parameters": t.parameters or {}} for t in tools]
    return (
        "You can call these tools:\n"
        f"{json.dumps(specs)}\n"
        f'To call one, answer only with {OPEN}{{"name": <tool name>, "arguments": <JSON object>}}{CLOSE}.'
    )


def _merge_system(messages: list[dict[str, str]], text: str) -> None:
    if messages and messages[0]["role"] == "system":
        messages[0]["content"] = f"{messages[0]['content']}\n\n{text}"
    else:
        messages.insert(0, {"role": "system", "content": text})


def required_call_schema(tools: Sequence[FunctionTool]) -> dict[str, Any]:
    """A JSON schema whose instances are exactly the valid calls of one of ``tools``."""
    options = [
        {
            "type": "object",
            "properties": {
                "name": {"const": tool.name},
                "arguments": tool.parameters or {"type": "object"},
            },
            "required": ["name", "arguments"],
        }
        for tool in tools
    ]
    return options[0] if len(options) == 1 else {"anyOf": options}


@dataclass(frozen=True)
class ParsedCall:
    name: str
    arguments: str


class ToolCallSplitter:
    """Streams text through, but pulls ``<tool_call>…</tool_call>`` blocks out as calls of known tools."""

    def __init__(self, tool_names: set[str]) -> None:
        self._names = tool_names
        self._pending = ""
        self._inside = False

    def feed(self, text: str) -> list[str | ParsedCall]:
        out: list[str | ParsedCall] = []
        buffer = self._pending + text
        self._pending = ""
        while buffer:
            marker = CLOSE if self._inside else OPEN
            at = buffer.find(marker)
            if at < 0:
                if self._inside:
                    self._pending = buffer
                else:
                    keep = partial_suffix(buffer, OPEN)
                    self._emit_text(out, buffer[: len(buffer) - keep])
                    self._pending = buffer[len(buffer) - keep :]
                break
            if self._inside:
                out.append(self._parse(buffer[:at]))
            else:
                self._emit_text(out, buffer[:at])
            buffer = buffer[at + len(marker) :]
            self._inside = not self._inside
        return out

    def flush(self) -> list[str | ParsedCall]:
        pending, self._pending = self._pending, ""
        if not pending:
            return []
        return [self._parse(pending)] if self._inside else [pending]

    def _emit_text(self, out: list[str | ParsedCall], text: str) -> None:
        if text:
            out.append(text)

    def _parse(self, block: str) -> str | ParsedCall:
        try:
            call = json.loads(block)
        except json.JSONDecodeError:
            return f"{OPEN}{block}{CLOSE}"
        if not isinstance(call, dict) or call.get("name") not in self._names:
            return f"{OPEN}{block}{CLOSE}"
        arguments = call.get("arguments", {})
        return ParsedCall(str(call["name"]), arguments if isinstance(arguments, str) else json.dumps(arguments))
