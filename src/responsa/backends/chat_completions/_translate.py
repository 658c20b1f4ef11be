"""A model turn as a Chat Completions request body (the dialect of vLLM, SGLang, Ollama, llama.cpp, OpenAI)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import orjson

from responsa.backends._base import SAMPLING_NUMBERS, ModelRequest, reasoning_text
from responsa.protocol import (
    ContentPart,
    FunctionCall,
    FunctionCallOutput,
    InputImage,
    InputText,
    Item,
    JsonObjectFormat,
    JsonSchemaFormat,
    Message,
    OutputText,
    Reasoning,
    Refusal,
    item_text,
)

from ._memo import ChatMessage, TranslationMemo

__all__ = ["chat_body", "chat_messages", "chat_request"]

_ROLES = {"user": "user", "assistant": "assistant", "system": "system", "developer": "system"}


def chat_request(
    request: ModelRequest, upstream_model: str, memo: TranslationMemo | None
) -> tuple[dict[str, Any], bytes]:
    """The body of ``POST /chat/completions`` for ``request`` (see :func:`chat_body`), and its JSON;
    with ``memo``, the JSON of the messages it kept is not made again."""
    if memo is None or request.reads_reasoning:  # the memo keeps messages translated without reasoning
        payload = chat_body(request, upstream_model)
        return payload, orjson.dumps(payload)
    system = _system(request.instructions)
    translation = memo.translate(request.items, _translate_item)
    payload = _body(request, upstream_model, system + translation.messages)
    rest = orjson.dumps({key: value for key, value in payload.items() if key != "messages"})
    elements = [piece for piece in (orjson.dumps(system)[1:-1], translation.elements) if piece]
    if len(elements) == 2:
        elements.insert(1, b",")
    # One join: each ``+`` of a long context's JSON would copy it again (some 100 kB a turn).
    return payload, b"".join([b'{"messages":[', *elements, b"],", memoryview(rest)[1:]])


def chat_body(request: ModelRequest, upstream_model: str) -> dict[str, Any]:
    """The JSON body of ``POST /chat/completions`` for ``request``; unset options are left out.

    The upstream streams only when the client does: a whole answer at once is cheaper, and
    servers that omit usage from streams (llama.cpp's) do report it then.
    """
    return _body(request, upstream_model, chat_messages(request.instructions, request.items, request.reads_reasoning))


def _body(request: ModelRequest, upstream_model: str, messages: list[ChatMessage]) -> dict[str, Any]:
    body: dict[str, Any] = {"model": upstream_model, "messages": messages}
    if request.streaming:
        body["stream"] = True
        body["stream_options"] = {"include_usage": True}
    if request.tools:
        body.update(_tool_fields(request))
    fmt = request.text_format
    if isinstance(fmt, JsonSchemaFormat):
        schema: dict[str, Any] = {"name": fmt.name, "schema": fmt.schema_}
        if fmt.strict:
            schema["strict"] = True
        body["response_format"] = {"type": "json_schema", "json_schema": schema}
    elif isinstance(fmt, JsonObjectFormat):
        body["response_format"] = {"type": "json_object"}
    if request.max_output_tokens is not None:
        body["max_tokens"] = request.max_output_tokens
    sampling = request.sampling
    for key in SAMPLING_NUMBERS:
        value = getattr(sampling, key)
        if value is not None:
            body[key] = value
    if sampling.stop:
        body["stop"] = list(sampling.stop)
    if sampling.ignore_eos:  # vLLM's and SGLang's extra sampling parameters
        body["ignore_eos"] = True
    if sampling.include_stop:
        body["include_stop_str_in_output"] = True
    if request.end_user is not None:
        body["user"] = request.end_user
    if request.safety_identifier is not None:
        body["safety_identifier"] = request.safety_identifier
    body.update(_extras(request))
    return body


def _tool_fields(request: ModelRequest) -> dict[str, Any]:
    """The tools, every definition (``allowed_tools`` leaves them all in the prompt), and the choice."""
    tools = [
        {
            "type": "function",
            "function": {
                key: value
                for key, value in (
                    ("name", tool.name),
                    ("description", tool.description),
                    ("parameters", tool.parameters or {"type": "object", "properties": {}}),
                    ("strict", tool.strict or None),  # sent only when asked for, as before
                )
                if value is not None
            },
        }
        for tool in request.tools
    ]
    callable_tools = request.callable_tools()
    forced = request.forced_tool
    if forced is None and request.tool_mode == "required" and len(callable_tools) == 1:
        forced = callable_tools[0].name  # allowed_tools down to one: Chat Completions' named choice says it
    if forced is not None:
        choice: Any = {"type": "function", "function": {"name": forced}}
    else:
        choice = request.tool_mode  # an upstream that calls what is not allowed fails the turn
    return {"tools": tools, "tool_choice": choice, "parallel_tool_calls": request.parallel_tool_calls}


def _extras(request: ModelRequest) -> dict[str, Any]:
    """Reasoning, log probabilities and template switches, in the fields vLLM and SGLang read (and
    OpenAI, for ``reasoning_effort`` and log probabilities)."""
    extras: dict[str, Any] = {}
    if request.reasoning_effort is not None:
        extras["reasoning_effort"] = request.reasoning_effort
    if request.template_kwargs:
        extras["chat_template_kwargs"] = dict(request.template_kwargs)
    if not request.skip_special_tokens:
        extras["skip_special_tokens"] = False
    if request.logprobs is not None:
        extras["logprobs"] = True
        if request.logprobs:
            extras["top_logprobs"] = request.logprobs
    return extras


def chat_messages(instructions: str | None, items: Sequence[Item], reasoning: bool = False) -> list[ChatMessage]:
    """Items as chat messages: function calls join the assistant turn, outputs become ``tool`` messages;
    with ``reasoning`` (``ModelRequest.reads_reasoning``), reasoning joins it as ``reasoning_content``
    (the field vLLM, SGLang and the chat templates of thinking models read back)."""
    messages = _system(instructions)
    translate = _translate_with_reasoning if reasoning else _translate_item
    for item in items:
        translate(item, messages)
    return messages


def _translate_with_reasoning(item: Item, messages: list[ChatMessage]) -> None:
    """``_translate_item``, with reasoning shown: an assistant turn of its own (content ``""``, so the
    calls after it join it) that the assistant's message after it takes in."""
    if isinstance(item, Reasoning):
        if text := reasoning_text(item):
            messages.append({"role": "assistant", "content": "", "reasoning_content": text})
        return
    last = messages[-1] if messages else None
    _translate_item(item, messages)
    if (last is not None and isinstance(item, Message) and item.role == "assistant" and len(messages) >= 2
            and messages[-2] is last and last.get("reasoning_content") and not last["content"]
            and "tool_calls" not in last):  # fmt: skip
        said = messages.pop()
        messages[-1] = {**said, "reasoning_content": last["reasoning_content"]}


def _system(instructions: str | None) -> list[ChatMessage]:
    return [{"role": "system", "content": instructions}] if instructions else []


def _translate_item(item: Item, messages: list[ChatMessage]) -> None:
    """What a chat model reads of ``item``, added to ``messages`` (a function call joins the assistant
    message before it: a copy of it, since ``messages`` may hold a memo's)."""
    if isinstance(item, Message):
        content = _one_text(item.content)
        messages.append({"role": _ROLES[item.role], "content": _content(item) if content is None else content})
    elif isinstance(item, FunctionCall):
        call = {"id": item.call_id, "type": "function", "function": {"name": item.name, "arguments": item.arguments}}
        last = messages[-1] if messages else None
        if last is not None and last["role"] == "assistant" and ("tool_calls" in last or type(last["content"]) is str):
            messages[-1] = {**last, "tool_calls": [*last.get("tool_calls", ()), call]}
        else:
            messages.append({"role": "assistant", "content": None, "tool_calls": [call]})
    elif isinstance(item, FunctionCallOutput):
        messages.append({"role": "tool", "tool_call_id": item.call_id, "content": item_text(item)})
    # Reasoning and unknown items carry nothing a chat model can take back in.


def _one_text(content: str | Sequence[ContentPart]) -> str | None:
    """The text of content that is just text (most messages: a string, or one text part), else None.
    Exact type checks: this runs for every item of every turn, and ``isinstance`` on a pydantic
    model costs several times more."""
    if type(content) is str:
        return content
    if len(content) == 1 and (type(only := content[0]) is InputText or type(only) is OutputText):
        return only.text
    return None


def _content(message: Message) -> str | list[dict[str, Any]]:
    parts = message.content
    if isinstance(parts, str):
        return parts
    if message.role != "user" or all(isinstance(p, InputText | OutputText | Refusal) for p in parts):
        return item_text(message)
    chat_parts: list[dict[str, Any]] = []
    for part in parts:
        if isinstance(part, InputText | OutputText):
            chat_parts.append({"type": "text", "text": part.text})
        elif isinstance(part, InputImage) and part.image_url:
            image: dict[str, Any] = {"url": part.image_url}
            if part.detail in ("low", "high", "auto"):
                image["detail"] = part.detail
            chat_parts.append({"type": "image_url", "image_url": image})
    return chat_parts
