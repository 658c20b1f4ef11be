"""Chat Completions in terms of Responses: a ``/chat/completions`` body becomes a create request, and
the response it produced becomes a ``chat.completion``.

LLMSim serves both APIs, and load tests still speak Chat Completions; running them through the
same engine keeps every backend, simulator profile, latency and fault the same for both.
"""

from __future__ import annotations

import time
from typing import Any

from responsa.protocol import (
    CreateResponseRequest,
    FunctionCall,
    InvalidRequest,
    Message,
    OutputText,
    Reasoning,
    Refusal,
    ResponseObject,
)

__all__ = ["chat_request", "completion", "completion_id", "completion_usage", "finish_reason", "logprobs_of"]

_RENAMED = {"max_completion_tokens": "max_output_tokens", "max_tokens": "max_output_tokens"}
"""Chat Completions fields that a create request spells differently."""
_LEFT_OUT = frozenset({"messages", "reasoning_effort", "logprobs", "stream_options", "functions", "function_call",
                       "modalities", "audio", "prediction", "web_search_options"})  # fmt: skip
"""Fields translated by hand below, or refused."""


def chat_request(body: dict[str, Any]) -> CreateResponseRequest:
    """The create request a chat body means: its messages as input items, never stored."""
    messages = body.get("messages")
    if not isinstance(messages, list) or not messages:
        raise InvalidRequest("Missing required parameter: 'messages'.", param="messages",
                             code="missing_required_parameter")  # fmt: skip
    for name in ("functions", "function_call", "audio", "prediction", "web_search_options"):
        if body.get(name) is not None:
            raise InvalidRequest(f"'{name}' is not supported here.", param=name, code="unsupported_parameter")
    if body.get("store"):
        raise InvalidRequest("Stored chat completions are not supported; use the Responses API to store.",
                             param="store", code="unsupported_value")  # fmt: skip
    create: dict[str, Any] = {_RENAMED.get(key, key): value for key, value in body.items() if key not in _LEFT_OUT}
    create["input"] = [item for index, message in enumerate(messages) for item in _items(message, index)]
    create["store"] = False
    if body.get("reasoning_effort") is not None:
        create["reasoning"] = {"effort": body["reasoning_effort"]}
    if body.get("logprobs"):
        create["include"] = ["message.output_text.logprobs"]
        create.setdefault("top_logprobs", 0)
    elif body.get("top_logprobs"):
        raise InvalidRequest("'top_logprobs' needs 'logprobs: true'.", param="top_logprobs")
    return CreateResponseRequest.model_validate(create)


def _items(message: Any, index: int) -> list[dict[str, Any]]:
    """One chat message as the input items it stands for."""
    param = f"messages[{index}]"
    if not isinstance(message, dict) or message.get("role") not in ("system", "developer", "user", "assistant", "tool"):
        raise InvalidRequest(f"Invalid '{param}.role': expected system, developer, user, assistant or tool.",
                             param=f"{param}.role", code="invalid_value")  # fmt: skip
    role, content = message["role"], message.get("content")
    if role == "tool":
        if not isinstance(message.get("tool_call_id"), str):
            raise InvalidRequest("A tool message needs 'tool_call_id'.", param=f"{param}.tool_call_id",
                                 code="missing_required_parameter")  # fmt: skip
        return [{"type": "function_call_output", "call_id": message["tool_call_id"], "output": _text(content)}]
    items: list[dict[str, Any]] = []
    if content:
        items.append({"type": "message", "role": role, "content": content})
    for call in message.get("tool_calls") or [] if role == "assistant" else []:
        function = call.get("function") or {}
        items.append({"type": "function_call", "call_id": call.get("id"), "name": function.get("name"),
                      "arguments": function.get("arguments") or "{}"})  # fmt: skip
    if not items and role != "assistant":
        items.append({"type": "message", "role": role, "content": ""})
    return items


def _text(content: Any) -> str:
    if isinstance(content, list):
        return "".join(str(part.get("text", "")) for part in content if isinstance(part, dict))
    return "" if content is None else str(content)


def completion_id(response_id: str) -> str:
    """The ``chatcmpl-`` id of the completion a response stands for."""
    return "chatcmpl-" + response_id.removeprefix("resp_")


def finish_reason(response: ResponseObject) -> str:
    """Why the completion ended, in Chat Completions' words."""
    if any(isinstance(item, FunctionCall) for item in response.output):
        return "tool_calls"
    if response.status == "incomplete":
        details = response.incomplete_details
        return "content_filter" if details is not None and details.reason == "content_filter" else "length"
    return "stop"


def completion_usage(response: ResponseObject) -> dict[str, Any] | None:
    usage = response.usage
    if usage is None:
        return None
    return {
        "prompt_tokens": usage.input_tokens,
        "completion_tokens": usage.output_tokens,
        "total_tokens": usage.total_tokens,
        "prompt_tokens_details": {"cached_tokens": usage.input_tokens_details.cached_tokens},
        "completion_tokens_details": {"reasoning_tokens": usage.output_tokens_details.reasoning_tokens},
    }


def logprobs_of(response: ResponseObject) -> dict[str, Any] | None:
    """Every output text's log probabilities, or None when none were asked for."""
    entries = [
        entry
        for item in response.output
        if isinstance(item, Message)
        for part in item.content
        if not isinstance(part, str) and part.type == "output_text"
        for entry in getattr(part, "logprobs", None) or []
    ]
    return {"content": entries, "refusal": None} if entries else None


def completion(response: ResponseObject, asked_logprobs: bool) -> dict[str, Any]:
    """The ``chat.completion`` object for a finished response."""
    message: dict[str, Any] = {"role": "assistant", "content": None, "refusal": None}
    parts = [part for item in response.output if isinstance(item, Message) for part in item.content]
    texts = [part.text for part in parts if isinstance(part, OutputText)]
    if texts:
        message["content"] = "".join(texts)
    refusals = [part.refusal for part in parts if isinstance(part, Refusal)]
    if refusals:  # the model declined: said in its own field, as Chat Completions does
        message["refusal"] = "".join(refusals)
    reasoning = [part.text for item in response.output if isinstance(item, Reasoning)
                 for part in (item.content or item.summary)]  # fmt: skip
    if reasoning:
        message["reasoning_content"] = "".join(reasoning)
    calls = [item for item in response.output if isinstance(item, FunctionCall)]
    if calls:
        message["tool_calls"] = [
            {"id": call.call_id, "type": "function", "function": {"name": call.name, "arguments": call.arguments}}
            for call in calls
        ]
    return {
        "id": completion_id(response.id),
        "object": "chat.completion",
        "created": response.created_at or int(time.time()),
        "model": response.model,
        "choices": [{
            "index": 0,
            "message": message,
            "finish_reason": finish_reason(response),
            "logprobs": logprobs_of(response) if asked_logprobs else None,
        }],
        "usage": completion_usage(response),
        "system_fingerprint": None,
    }  # fmt: skip
