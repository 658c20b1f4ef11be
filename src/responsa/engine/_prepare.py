"""Turn a validated request into a model turn: check what the request asks, rebuild the context.

Everything a client can get wrong is checked here, before anything is stored or generated.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import jsonschema
from jsonschema.validators import validator_for

from responsa.backends import ModelRequest, Sampling, ToolMode
from responsa.protocol import (
    TERMINAL_STATUSES,
    AllowedTools,
    Conflict,
    CreateResponseRequest,
    FunctionCall,
    FunctionCallOutput,
    FunctionTool,
    HostedToolChoice,
    InputText,
    InvalidRequest,
    Item,
    ItemReference,
    JsonSchemaFormat,
    McpTool,
    Message,
    NamedFunctionChoice,
    NotFound,
    OutputText,
    Reasoning,
    new_id,
)
from responsa.store import Store

from ._mcp import McpPlan, model_items

__all__ = [
    "HOSTED_TOOLS",
    "KNOWN_INCLUDES",
    "build_model_request",
    "check_request",
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
HOSTED_TOOLS = frozenset({"web_search", "web_search_preview", "file_search", "code_interpreter", "image_generation"})
"""Built-in tools; accepted when the model's backend runs them (the simulator does)."""

_ID_PREFIX = {"message": "msg", "function_call": "fc", "function_call_output": "fco", "reasoning": "rs"}


def check_request(request: CreateResponseRequest) -> None:
    """Reject what we cannot honour, with the parameter at fault."""
    if request.background and not request.store:
        raise InvalidRequest("Background responses must be stored: 'background' needs 'store: true'.", param="store")
    _check_conversation(request)
    if request.input is None and request.previous_response_id is None:
        raise InvalidRequest("Missing required parameter: 'input'.", param="input", code="missing_required_parameter")
    for value in request.include or []:
        if value not in KNOWN_INCLUDES:
            raise InvalidRequest(f"Invalid value for 'include': {value!r}.", param="include", code="invalid_value")
    _check_tools(request)
    _check_tool_choice(request)
    fmt = request.text.format if request.text else None
    if isinstance(fmt, JsonSchemaFormat):
        _check_schema(fmt.schema_, "text.format.schema")


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
    names: set[str] = set()
    for index, tool in enumerate(request.tools):
        if isinstance(tool, McpTool) or tool.type in HOSTED_TOOLS:
            continue
        if not isinstance(tool, FunctionTool):
            raise InvalidRequest(
                f"Tool type '{tool.type}' is not supported yet.", param=f"tools[{index}].type", code="unsupported_value"
            )
        if tool.name in names:
            raise InvalidRequest(f"Duplicate tool name '{tool.name}'.", param=f"tools[{index}].name")
        names.add(tool.name)
        if tool.parameters is not None:
            _check_schema(tool.parameters, f"tools[{index}].parameters")


def _check_schema(schema: dict[str, Any], param: str) -> None:
    try:
        validator_for(schema).check_schema(schema)
    except jsonschema.SchemaError as exc:
        raise InvalidRequest(
            f"Invalid schema for '{param}': {exc.message}", param=param, code="invalid_schema"
        ) from exc


def _allowed(name: str, routes: dict[str, str], choice: AllowedTools) -> bool:
    label = routes.get(name)
    for ref in choice.tools:
        if label is None and ref.type == "function" and ref.name == name:
            return True
        if label is not None and ref.type == "mcp" and ref.server_label == label and ref.name in (None, name):
            return True
    return False


def _function_names(request: CreateResponseRequest) -> set[str]:
    return {tool.name for tool in request.tools if isinstance(tool, FunctionTool)}


def _check_tool_choice(request: CreateResponseRequest) -> None:
    choice = request.tool_choice
    names = _function_names(request)
    labels = {tool.server_label for tool in request.tools if isinstance(tool, McpTool)}
    if choice == "required" and not names and not labels:
        raise InvalidRequest("tool_choice 'required' needs at least one tool in 'tools'.", param="tool_choice")
    if isinstance(choice, NamedFunctionChoice) and choice.name not in names:
        raise InvalidRequest(f"Tool choice '{choice.name}' not found in 'tools' parameter.", param="tool_choice")
    if isinstance(choice, AllowedTools):
        for index, ref in enumerate(choice.tools):
            known = ref.name in names if ref.type == "function" else ref.type == "mcp" and ref.server_label in labels
            if not known:
                raise InvalidRequest(
                    f"Allowed tool {ref.name or ref.type!r} not found in 'tools' parameter.",
                    param=f"tool_choice.tools[{index}]",
                )
    hosted = {tool.type for tool in request.tools if tool.type in HOSTED_TOOLS}
    mcp_choice = (
        choice.type == "mcp" and choice.server_label in labels if isinstance(choice, HostedToolChoice) else False
    )
    if isinstance(choice, HostedToolChoice) and not mcp_choice and choice.type not in hosted:
        raise InvalidRequest(
            f"Tool choice {choice.type!r} needs a matching tool in 'tools' (supported: function and mcp).",
            param="tool_choice",
            code="unsupported_value",
        )


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


async def resolve_items(store: Store, raw: Sequence[Item], param: str) -> list[Item]:
    """Items as they will be stored: ids and statuses filled in, ``item_reference``s replaced."""
    items: list[Item] = []
    for index, item in enumerate(raw):
        if isinstance(item, ItemReference):
            found = await store.get_item(item.id)
            if found is None:
                raise NotFound(f"Item with id '{item.id}' not found.", param=f"{param}[{index}].id")
            items.append(found)
        else:
            items.append(_with_defaults(item))
    return items


def _with_defaults(item: Item) -> Item:
    item = item.model_copy()
    if isinstance(item, Message) and isinstance(item.content, str):
        part = OutputText(text=item.content) if item.role == "assistant" else InputText(text=item.content)
        item.content = [part]
    if isinstance(item, Message | FunctionCall | FunctionCallOutput | Reasoning):
        if item.id is None:
            item.id = new_id(_ID_PREFIX[item.type])
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
    mcp: McpPlan | None = None,
    calls_made: int = 0,
    last_round: bool = False,
) -> ModelRequest:
    """What the backend sees: context, callable tools under ``tool_choice``, sampling and limits.

    Once ``max_tool_calls`` is spent (``calls_made`` so far in this response), or on the agentic
    loop's last round, the model may only answer in text.
    """
    tools = [tool for tool in request.tools if isinstance(tool, FunctionTool)]
    hosted = [tool.type for tool in request.tools if tool.type in HOSTED_TOOLS]
    routes = mcp.routes if mcp else {}
    if mcp:
        tools += mcp.tools
    choice = request.tool_choice
    mode: ToolMode = "auto"
    forced: str | None = None
    if isinstance(choice, str):
        mode = choice
    elif isinstance(choice, NamedFunctionChoice):
        mode, forced = "required", choice.name
    elif isinstance(choice, AllowedTools):
        tools = [tool for tool in tools if _allowed(tool.name, routes, choice)]
        mode = choice.mode
    elif isinstance(choice, HostedToolChoice) and choice.type in HOSTED_TOOLS:  # {"type": "web_search"}
        tools, hosted, mode = [], [choice.type], "required"
    elif isinstance(choice, HostedToolChoice):  # {"type": "mcp", "server_label", "name"?}
        tools = [tool for tool in tools if routes.get(tool.name) == choice.server_label]
        mode = "required"
        forced = next((tool.name for tool in tools if choice.name and tool.name.endswith(choice.name)), None)
    reasoning = request.reasoning
    calls_left = None if request.max_tool_calls is None else max(request.max_tool_calls - calls_made, 0)
    if calls_left == 0 or last_round:
        mode, forced = "none", None
    return ModelRequest(
        model=request.model,
        instructions=request.instructions,
        items=model_items(context),
        tools=tools,
        hosted_tools=hosted if mode != "none" else [],
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
        ),
        fault=fault,
        streaming=request.stream,
        reasoning_effort=reasoning.effort if reasoning else None,
        reasoning_summary=(reasoning.summary or reasoning.generate_summary) if reasoning else None,
        encrypted_reasoning="reasoning.encrypted_content" in (request.include or []),
    )
