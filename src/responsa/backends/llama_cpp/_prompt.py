"""Conversation → chat template messages for a local model, and tool calls back out of its text.

A template that knows tools (it reads ``tools``) gets them, and the conversation's calls and
results, the way Hugging Face templates expect. For one that does not (SmolLM2's), the tools are
described in the system prompt and calls written in the Hermes/Qwen style
(``<tool_call>{"name": …, "arguments": {…}}</tool_call>``), results as
``<tool_response>…</tool_response>`` turns.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from responsa.backends._base import ModelRequest
from responsa.backends.chat_completions import chat_messages
from responsa.protocol import FunctionTool

__all__ = ["image_urls", "native_messages", "template_messages", "template_tools"]

OPEN, CLOSE = "<tool_call>", "</tool_call>"


def _flat_text(parts: list[dict[str, Any]], marker: str | None) -> str:
    """A message's parts as one text: images as ``marker`` (a model with a projector), else left out."""
    texts = []
    for part in parts:
        if part.get("type") == "text":
            texts.append(part.get("text", ""))
        elif part.get("type") == "image_url" and marker is not None:
            texts.append(marker)
    return "\n".join(texts)


def image_urls(request: ModelRequest) -> list[str]:
    """The images of the conversation, in the order their markers appear in the prompt."""
    return [
        part["image_url"]["url"]
        for message in chat_messages(request.instructions, request.items, request.reads_reasoning)
        if isinstance(message.get("content"), list)
        for part in message["content"]
        if part.get("type") == "image_url"
    ]


def native_messages(request: ModelRequest, marker: str | None = None) -> list[dict[str, Any]]:
    """Messages as Hugging Face chat templates that know tools expect them: an assistant turn's
    ``tool_calls`` with arguments as objects, results as ``tool`` turns naming their call. Mistral's
    templates want call ids of nine letters and digits, and use the last nine of ours."""
    messages: list[dict[str, Any]] = []
    names: dict[str, str] = {}
    for message in chat_messages(request.instructions, request.items, request.reads_reasoning):
        message = dict(message)
        content = message.get("content")
        if content is not None and not isinstance(content, str):
            message["content"] = _flat_text(content, marker)
        if calls := message.get("tool_calls"):
            message["content"] = message.get("content") or ""
            message["tool_calls"] = [
                {**call, "function": {**call["function"], "arguments": _loads(call["function"]["arguments"])}}
                for call in calls
            ]
            names.update({call["id"]: call["function"]["name"] for call in calls})
        if message["role"] == "tool":
            message["name"] = names.get(message.get("tool_call_id", ""), "")
        messages.append(message)
    return messages


def template_tools(tools: Sequence[FunctionTool]) -> list[dict[str, Any]]:
    """``tools`` as chat templates list them (the Chat Completions shape)."""
    return [
        {"type": "function", "function": {"name": t.name, "description": t.description or "",
                                          "parameters": t.parameters or {"type": "object", "properties": {}}}}
        for t in tools
    ]  # fmt: skip


def template_messages(request: ModelRequest, describe_tools: bool, marker: str | None = None) -> list[dict[str, str]]:
    """Messages with string content only; tool traffic rendered as tagged text, or, when the model
    may not call tools (it must answer now), as plain words: a small model shown tagged calls and
    results writes more of them instead of an answer."""
    plain = request.tool_mode == "none"
    flat: list[dict[str, str]] = []
    for message in chat_messages(request.instructions, request.items, request.reads_reasoning):
        role = message["role"]
        if role == "tool":
            content = message["content"]
            wrapped = f"Use this information:\n{content}" if plain else f"<tool_response>\n{content}\n</tool_response>"
            flat.append({"role": "user", "content": wrapped})
            continue
        text = message.get("content") or ""
        if not isinstance(text, str):
            text = _flat_text(text, marker)
        if thought := message.get("reasoning_content"):  # shown back (reasoning.context), as thinking models write it
            text = f"<think>\n{thought}\n</think>\n{text}"
        calls = message.get("tool_calls") or []
        if plain and calls and not text:
            continue  # the result that follows says what was found
        for call in [] if plain else calls:
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
