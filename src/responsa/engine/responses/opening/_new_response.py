"""The response object a request starts as: its parameters echoed as the OpenAI API echoes them."""

from __future__ import annotations

import time
from collections.abc import Collection

from responsa.backends import Backend
from responsa.protocol import (
    CreateResponseRequest,
    InvalidRequest,
    ResponseObject,
    ResponseReasoning,
    TextConfig,
    Tool,
    new_id,
    unvalidated,
)

__all__ = ["new_response", "unavailable_hosted"]


def unavailable_hosted(
    request: CreateResponseRequest, backend: Backend, policy: str, hosted: Collection[str], served: Collection[str]
) -> list[dict[str, str]]:
    """The request's ``hosted`` tools the backend cannot run (and the server does not run itself,
    ``served``): 400 under the ``reject`` policy, else what to report as left out (``ignored_tools``)."""
    ignored = []
    for index, tool in enumerate(request.tools):
        if tool.type not in hosted or tool.type in backend.hosted_tools() or tool.type in served:
            continue
        message = f"Tool type '{tool.type}' is not available with model '{request.model}'."
        if policy == "reject":
            raise InvalidRequest(message, param=f"tools[{index}].type", code="unsupported_value")
        ignored.append({"type": tool.type, "param": f"tools[{index}]", "message": message + " It was left out."})
    return ignored


def _without_credentials(tools: list[Tool]) -> list[Tool]:
    """The fields a tool type keeps secret (``SECRET_FIELDS``: an MCP tool's ``headers`` and
    ``authorization``) are never echoed back, nor stored (the stored body is the response object)."""
    return [tool.model_copy(update=dict.fromkeys(secret)) if (secret := getattr(tool, "SECRET_FIELDS", ())) else tool
            for tool in tools]  # fmt: skip


def _reasoning_echo(request: CreateResponseRequest) -> ResponseReasoning:
    asked = request.reasoning
    return ResponseReasoning(effort=asked.effort if asked else None, summary=request.reasoning_summary)


def new_response(request: CreateResponseRequest, stored: bool) -> ResponseObject:
    """The response as it starts, built without validation: each value is one of the request's,
    validated to the same type, or made here (validating them again cost 4 µs, a create)."""
    conversation = request.conversation_id
    response = unvalidated(
        ResponseObject,
        {
            "id": new_id("resp"),
            "created_at": int(time.time()),
            "status": "queued" if request.background else "in_progress",
            "background": request.background,
            "instructions": request.instructions,
            "max_output_tokens": request.max_output_tokens,
            "max_tool_calls": request.max_tool_calls,
            "metadata": dict(request.metadata or {}),
            "model": request.model,
            "parallel_tool_calls": request.parallel_tool_calls,
            "previous_response_id": request.previous_response_id,
            "prompt_cache_key": request.prompt_cache_key,
            "prompt_cache_retention": request.prompt_cache_retention,
            "reasoning": _reasoning_echo(request),
            "safety_identifier": request.safety_identifier,
            "service_tier": request.service_tier or "default",
            "store": stored,
            "conversation": None if conversation is None else {"id": conversation},
            "temperature": 1.0 if request.temperature is None else request.temperature,
            "presence_penalty": request.presence_penalty or 0.0,
            "frequency_penalty": request.frequency_penalty or 0.0,
            "text": request.text or TextConfig(),
            "tool_choice": request.tool_choice,
            "tools": _without_credentials(request.tools),
            "top_logprobs": request.top_logprobs or 0,
            "top_p": 1.0 if request.top_p is None else request.top_p,
            "truncation": request.truncation,
            "user": request.user,
            "shown_includes": tuple(request.include or ()),
        },
    )
    if request.image is not None or request.access_programs is not None or request.model_extra:
        _echo_late_options(request, response)
    return response


def _echo_late_options(request: CreateResponseRequest, response: ResponseObject) -> None:
    """openai 3.57's effective options, on responses that asked: image context is never compressed
    here; access programs gate nothing, so the one asked for is the one in effect."""
    if request.image is not None:
        response.image = {"context_compression": "disabled"}  # see docs/api.md
    if request.access_programs is not None and request.access_programs.cyber is not None:
        response.access_programs = {"cyber": request.access_programs.cyber}
