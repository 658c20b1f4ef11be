"""What a create request asks, checked: everything a client can get wrong in the body alone is a 400
here, before anything is read, stored or generated."""

from __future__ import annotations

from responsa.protocol import (
    AdditionalTools,
    CreateResponseRequest,
    InvalidRequest,
    JsonSchemaFormat,
    Tool,
)

from ...output import KNOWN_INCLUDES, check_includes
from ...tools import ToolPlan, ToolRegistry, check_schema, check_tool_choice, plan_client_tools

__all__ = ["check_request"]


def check_request(request: CreateResponseRequest, kinds: ToolRegistry) -> ToolPlan:
    """Reject what we cannot honour, with the parameter at fault; the request's client-run tools,
    planned with those its input adds (``additional_tools``, a tool search's output), not its history's."""
    if request.background and not request.store:
        raise InvalidRequest("Background responses must be stored: 'background' needs 'store: true'.", param="store")
    _check_conversation(request)
    if request.input is None and request.previous_response_id is None:
        raise InvalidRequest("Missing required parameter: 'input'.", param="input", code="missing_required_parameter")
    check_includes(request.include or [], KNOWN_INCLUDES)
    _check_unsupported(request)
    _check_tools(request, kinds)
    given = request.input if isinstance(request.input, list) else ()
    plan = plan_client_tools(kinds, request.tools, given)  # each tool checked as its kind offers it
    check_tool_choice(request, plan)
    fmt = request.text.format if request.text else None
    if isinstance(fmt, JsonSchemaFormat):
        check_schema(fmt.schema_, "text.format.schema")
    return plan


def _check_unsupported(request: CreateResponseRequest) -> None:
    """Parameters of other servers that responsa accepts only where it can honour them."""
    extra = request.model_extra or {}
    if "response_format" in extra:
        raise InvalidRequest(
            "Give the output format once: 'response_format' or 'text.format', not both.",
            param="response_format",
            code="mutually_exclusive_parameters",
        )
    for name, why in _NOT_SERVED.items():
        if extra.get(name) is not None:
            raise InvalidRequest(f"'{name}' is not supported here: {why}.", param=name, code="unsupported_parameter")
    _check_late_options(request)
    for name, only, why in _ONLY_VALUES:
        value = getattr(request, name)
        if value is not None and value != only:
            raise InvalidRequest(
                f"Invalid '{name}': {value}. Only {only} is supported: {why}.", param=name, code="unsupported_value"
            )


def _check_late_options(request: CreateResponseRequest) -> None:
    """The options of openai 3.57 accepted only at the values this server honours."""
    reasoning = request.reasoning
    if reasoning is not None and reasoning.mode not in (None, "standard"):
        raise InvalidRequest(
            f"Invalid 'reasoning.mode': {reasoning.mode!r}. Only 'standard' is supported.",
            param="reasoning.mode",
            code="unsupported_value",
        )
    if request.image is not None and request.image.context_compression == "enabled":
        raise InvalidRequest(
            "Invalid 'image.context_compression': 'enabled'. Image context is never compressed here ('auto' or "
            "'disabled').",
            param="image.context_compression",
            code="unsupported_value",
        )


_SPECULATIVE = "no backend here decodes speculatively (with a draft model or prompt lookup), so it would change nothing"
_NOT_SERVED = dict.fromkeys(("num_assistant_tokens", "assistant_confidence_threshold", "max_ngram_size"), _SPECULATIVE)
"""Fields nothing here honours, each with why: a 400 naming them, never accepted without effect.
OpenVINO Model Server's speculative decoding controls are valid there only with a draft model or prompt
lookup configured."""

_ONLY_VALUES = (
    ("n", 1, "a response has one output"),
    ("best_of", 1, "beam search is not run here"),
    ("length_penalty", 1.0, "it applies to beam search, which is not run here"),
)
"""OpenVINO's beam-search parameters: accepted at the value that changes nothing, else a 400."""


def _check_conversation(request: CreateResponseRequest) -> None:
    conversation = request.conversation_id
    if conversation is None:
        return
    if request.previous_response_id is not None:
        raise InvalidRequest(
            "Mutually exclusive parameters. Ensure you are only providing one of: "
            "'previous_response_id' or 'conversation'.",
            code="mutually_exclusive_parameters",
        )
    if not request.store:
        raise InvalidRequest(
            "'store: false' cannot be used with 'conversation': a conversation keeps every response's items.",
            param="store",
        )


def _check_tools(request: CreateResponseRequest, kinds: ToolRegistry) -> None:
    """Who may call each tool, and whether a kind serves its type (its kind checks the rest as it offers
    it): the request's ``tools``, and those of its input's ``additional_tools`` items, which may only
    be tools the client runs (a server-run kind is prepared from ``tools`` before the model reads the
    input, so one given there would not be served)."""
    for index, tool in enumerate(request.tools):
        _check_tool(tool, f"tools[{index}]", kinds, client_only=False)
    for index, item in enumerate(request.input if isinstance(request.input, list) else ()):
        if type(item) is AdditionalTools:
            for number, tool in enumerate(item.tools):
                _check_tool(tool, f"input[{index}].tools[{number}]", kinds, client_only=True)


def _check_tool(tool: Tool, param: str, kinds: ToolRegistry, client_only: bool) -> None:
    _check_callers(tool, param)
    if kinds.for_tool(tool.type) is None:
        raise InvalidRequest(
            f"Tool type '{tool.type}' is not supported yet.", param=f"{param}.type", code="unsupported_value"
        )
    if client_only and (tool.type in kinds.hosted_tool_types() or kinds.server_kinds([tool.type])):
        raise InvalidRequest(
            f"Tool type '{tool.type}' is not supported in 'additional_tools' here: only tools the client "
            "runs are (function, custom, namespace, shell, apply_patch...); give it in 'tools'.",
            param=f"{param}.type",
            code="unsupported_value",
        )


def _check_callers(tool: Tool, param: str) -> None:
    """``allowed_callers`` (openai 3.57): only ``direct`` calls are served here; a tool that programs
    may call (``programmatic``, OpenAI's programmatic tool calling) is a 400, never offered as if direct."""
    callers = (tool.model_extra or {}).get("allowed_callers")
    inner = getattr(tool, "tools", None) or ()
    for where, entry in [(param, callers), *((f"{param}.tools[{i}]", (t.model_extra or {}).get("allowed_callers"))
                                             for i, t in enumerate(inner))]:  # fmt: skip
        if entry is not None and (not isinstance(entry, list) or set(entry) != {"direct"}):
            raise InvalidRequest(
                "Only direct tool calls are served here ('allowed_callers': ['direct']): programmatic tool calling "
                "is not.",
                param=f"{where}.allowed_callers",
                code="unsupported_value",
            )
