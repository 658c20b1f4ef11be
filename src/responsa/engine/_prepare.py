"""Turn a validated request into a model turn: check what the request asks, rebuild the context.

Everything a client can get wrong is checked here, before anything is stored or generated.
"""

from __future__ import annotations

import time
from collections.abc import Collection, Sequence
from typing import Any

import jsonschema
from jsonschema.validators import validator_for

from responsa.backends import ModelRequest, Sampling
from responsa.protocol import (
    TERMINAL_STATUSES,
    Compaction,
    Conflict,
    CreateResponseRequest,
    CustomTool,
    FunctionCall,
    FunctionCallOutput,
    FunctionTool,
    InputText,
    InvalidRequest,
    Item,
    ItemReference,
    JsonSchemaFormat,
    Message,
    NamespaceTool,
    NotFound,
    OutputText,
    Reasoning,
    UnknownPart,
    new_id,
)
from responsa.store import Store

from ._includes import check_includes
from ._tool_choice import HOSTED_TOOLS, check_tool_choice, resolve_tool_choice
from .tools import ToolPlan, id_prefix, kind_for_tool, plan_client_tools, replayed

__all__ = [
    "KNOWN_INCLUDES",
    "build_model_request",
    "check_request",
    "conversation_items",
    "load_history",
    "normalize_input",
    "resolve_items",
]

KNOWN_INCLUDES = frozenset(
    {
        "code_interpreter_call.outputs",
        "computer_call_output.output.image_url",
        "file_search_call.results",
        "message.input_image.image_url",
        "message.output_text.logprobs",
        "reasoning.encrypted_content",
        "web_search_call.action.sources",
        "web_search_call.results",
    }
)
_ID_PREFIX = {"message": "msg", "reasoning": "rs", "compaction": "cmp"}
"""Of the ids of items that are no tool kind's (those say theirs)."""


def check_request(request: CreateResponseRequest) -> None:
    """Reject what we cannot honour, with the parameter at fault."""
    if request.background and not request.store:
        raise InvalidRequest("Background responses must be stored: 'background' needs 'store: true'.", param="store")
    _check_conversation(request)
    if request.input is None and request.previous_response_id is None:
        raise InvalidRequest("Missing required parameter: 'input'.", param="input", code="missing_required_parameter")
    check_includes(request.include or [], KNOWN_INCLUDES)
    _check_unsupported(request)
    _check_tools(request)
    check_tool_choice(request, plan_client_tools(request.tools))
    fmt = request.text.format if request.text else None
    if isinstance(fmt, JsonSchemaFormat):
        _check_schema(fmt.schema_, "text.format.schema")


def _check_unsupported(request: CreateResponseRequest) -> None:
    """Parameters of other servers that responsa accepts only where it can honour them."""
    extra = request.model_extra or {}
    if "response_format" in extra:
        raise InvalidRequest(
            "Give the output format once: 'response_format' or 'text.format', not both.",
            param="response_format",
            code="mutually_exclusive_parameters",
        )
    for name, only, why in _ONLY_VALUES:
        value = getattr(request, name)
        if value is not None and value != only:
            raise InvalidRequest(
                f"Invalid '{name}': {value}. Only {only} is supported: {why}.", param=name, code="unsupported_value"
            )


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
    if not conversation.startswith("conv_"):
        raise InvalidRequest(
            f"Invalid 'conversation': '{conversation}'. Expected an ID that begins with 'conv_'.",
            param="conversation",
            code="invalid_conversation_id",
        )
    if not request.store:
        raise InvalidRequest(
            "'store: false' cannot be used with 'conversation': a conversation keeps every response's items.",
            param="store",
        )


def _check_tools(request: CreateResponseRequest) -> None:
    for index, tool in enumerate(request.tools):
        param = f"tools[{index}]"
        if isinstance(tool, FunctionTool):
            _check_function(tool, param)
        elif isinstance(tool, NamespaceTool):
            for inner_index, inner in enumerate(tool.tools):
                _check_function(inner, f"{param}.tools[{inner_index}]")
        elif isinstance(tool, CustomTool):
            _check_function(tool, param)
        elif not (tool.type in HOSTED_TOOLS or kind_for_tool(tool.type) is not None):
            raise InvalidRequest(
                f"Tool type '{tool.type}' is not supported yet.", param=f"{param}.type", code="unsupported_value"
            )


def _check_function(tool: FunctionTool | CustomTool, param: str) -> None:
    if isinstance(tool, FunctionTool):
        if tool.parameters is not None:
            _check_schema(tool.parameters, f"{param}.parameters")
        return
    fmt = tool.format
    if fmt is not None and fmt.type == "grammar" and not (fmt.syntax and fmt.definition):
        raise InvalidRequest(
            "A grammar format needs 'syntax' ('lark' or 'regex') and 'definition'.", param=f"{param}.format"
        )


def _check_schema(schema: dict[str, Any], param: str) -> None:
    try:
        validator_for(schema).check_schema(schema)
    except jsonschema.SchemaError as exc:
        raise InvalidRequest(
            f"Invalid schema for '{param}': {exc.message}", param=param, code="invalid_schema"
        ) from exc


async def load_history(store: Store, request: CreateResponseRequest) -> list[Item]:
    """The context before this request's input: the conversation's items or the response chain."""
    conversation_id = request.conversation_id
    if conversation_id is not None:
        if not store.retention.conversations_enabled:
            raise InvalidRequest("Conversation storage is disabled on this server.", param="conversation")
        items = await store.load_conversation(conversation_id)
        if items is None:
            raise NotFound(f"Conversation with id '{conversation_id}' not found.", param="conversation")
        return items
    previous_id = request.previous_response_id
    if previous_id is None:
        return []
    previous = await store.get_response(previous_id)
    if previous is None:
        raise NotFound(
            f"Previous response with id '{previous_id}' not found.",
            param="previous_response_id",
            code="previous_response_not_found",
        )
    if previous.status not in TERMINAL_STATUSES:
        raise Conflict(
            f"Previous response '{previous_id}' is still {previous.status}; wait for it to finish.",
            param="previous_response_id",
            code="previous_response_in_progress",
        )
    return await store.load_context(previous_id) or []


async def normalize_input(store: Store, request: CreateResponseRequest, history: Sequence[Item]) -> list[Item]:
    """The request's input as typed items with ids, content parts and resolved ``item_reference``s."""
    raw = request.input
    if raw is None:
        return []
    if isinstance(raw, str):
        raw = [Message(role="user", content=[InputText(text=raw)])]
    items = await resolve_items(store, raw, "input")
    _check_call_outputs([*history, *items])
    return items


async def resolve_items(store: Store, raw: Sequence[Item], param: str, copies: bool = False) -> list[Item]:
    """Items as they will be stored: ids and statuses filled in, ``item_reference``s replaced (by a
    copy with its own id when ``copies``: an item added to a conversation is that conversation's own)."""
    items: list[Item] = []
    for index, item in enumerate(raw):
        if isinstance(item, ItemReference):
            found = await store.get_item(item.id)
            if found is None:
                raise NotFound(f"Item with id '{item.id}' not found.", param=f"{param}[{index}].id")
            items.append(found.model_copy(update={"id": _new_item_id(found.type)}) if copies else found)
        else:
            _check_parts(item, f"{param}[{index}]")
            items.append(_with_defaults(item))
    return items


def _check_parts(item: Item, param: str) -> None:
    """A content part no model here reads is a 400, never dropped; vendor-prefixed ones
    (``acme:thing``) are extensions, kept as sent."""
    if isinstance(item, Message):
        field, content = "content", item.content
    elif isinstance(item, FunctionCallOutput):
        field, content = "output", item.output
    else:
        return
    if isinstance(content, str):
        return
    for index, part in enumerate(content):
        if isinstance(part, UnknownPart) and ":" not in part.type:
            raise InvalidRequest(
                f"Invalid content part type {part.type!r}: expected one of input_text, input_image, input_file, "
                "output_text, refusal (or Chat Completions' text, image_url, file).",
                param=f"{param}.{field}[{index}].type",
                code="invalid_value",
            )


def _new_item_id(item_type: str) -> str:
    return new_id(id_prefix(item_type) or _ID_PREFIX.get(item_type, "item"))


def conversation_items(items: Sequence[Item]) -> list[Item]:
    """Items as a conversation keeps them: each with its own id (to be fetched and deleted one by one)
    and ``created_at`` (as SGLang lists them); copies, so a response's output is left as it was."""
    now = int(time.time())
    stamped = []
    for item in items:
        fields: dict[str, Any] = {}
        if getattr(item, "id", None) is None:
            fields["id"] = _new_item_id(item.type)
        if getattr(item, "created_at", None) is None:
            fields["created_at"] = now
        stamped.append(item.model_copy(update=fields) if fields else item)
    return stamped


def _with_defaults(item: Item) -> Item:
    item = item.model_copy()
    if isinstance(item, Message) and isinstance(item.content, str):
        part = OutputText(text=item.content) if item.role == "assistant" else InputText(text=item.content)
        item.content = [part]
    if isinstance(item, Message | FunctionCall | FunctionCallOutput | Reasoning):
        if item.id is None:
            item.id = _new_item_id(item.type)
        if item.status is None:
            item.status = "completed"
    return item


def _check_call_outputs(items: Sequence[Item]) -> None:
    calls = {item.call_id for item in items if isinstance(item, FunctionCall)}
    for item in items:
        if isinstance(item, FunctionCallOutput) and item.call_id not in calls:
            raise InvalidRequest(
                f"No tool call found for function call output with call_id {item.call_id}.", param="input"
            )


def build_model_request(
    request: CreateResponseRequest,
    context: Sequence[Item],
    fault: str | None,
    tools: ToolPlan,
    calls_made: int = 0,
    last_round: bool = False,
    unavailable: Collection[str] = (),
) -> ModelRequest:
    """What the backend sees: context, callable tools under ``tool_choice``, sampling and limits.

    Once ``max_tool_calls`` is spent (``calls_made`` so far in this response), or on the agentic
    loop's last round, the model may only answer in text. Hosted tools in ``unavailable`` (which
    the backend cannot run, or the server runs as tools in ``tools``) are left out.
    """
    policy = resolve_tool_choice(request, tools, unavailable)
    mode, forced = policy.mode, policy.forced
    reasoning = request.reasoning
    calls_left = None if request.max_tool_calls is None else max(request.max_tool_calls - calls_made, 0)
    if calls_left == 0 or last_round:
        mode, forced = "none", None
    return ModelRequest(
        model=request.model,
        instructions=request.instructions,
        items=replayed([item for item in context if not isinstance(item, Compaction)], tools),
        tools=policy.tools,
        hosted_tools=policy.hosted if mode != "none" else [],
        tool_mode=mode,
        forced_tool=forced,
        parallel_tool_calls=request.parallel_tool_calls,
        max_tool_calls=calls_left,
        text_format=request.text.format if request.text else None,
        max_output_tokens=request.max_output_tokens,
        sampling=Sampling(
            temperature=request.temperature,
            top_p=request.top_p,
            top_k=request.top_k,
            min_p=request.min_p,
            repetition_penalty=request.repetition_penalty,
            frequency_penalty=request.frequency_penalty,
            presence_penalty=request.presence_penalty,
            seed=request.seed,
            stop=tuple(request.stop_sequences),
            ignore_eos=bool(request.ignore_eos),
            include_stop=bool(request.include_stop_str_in_output),
        ),
        fault=fault,
        streaming=request.stream,
        reasoning_effort=reasoning.effort if reasoning else None,
        reasoning_summary=(reasoning.summary or reasoning.generate_summary) if reasoning else None,
        encrypted_reasoning="reasoning.encrypted_content" in (request.include or []),
        tool_grammars=tools.grammars(),
        logprobs=(request.top_logprobs or 0) if request.wants_logprobs else None,
        template_kwargs=template_kwargs(request),
        skip_special_tokens=request.skip_special_tokens is not False,
    )


def template_kwargs(request: CreateResponseRequest) -> dict[str, Any]:
    """``chat_template_kwargs`` as sent, with ``enable_thinking`` from ``reasoning.effort`` where the
    client did not set it: any effort but ``none`` thinks (as OpenVINO reads it)."""
    kwargs = dict(request.chat_template_kwargs or {})
    effort = request.reasoning.effort if request.reasoning else None
    if effort is not None and "enable_thinking" not in kwargs:
        kwargs["enable_thinking"] = effort != "none"
    return kwargs
