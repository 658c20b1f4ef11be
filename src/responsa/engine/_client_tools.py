"""Tools the client runs, in every form agent clients send them, mapped onto function calling.

Models (and Chat Completions upstreams) only know functions with JSON arguments. So a function
inside a ``namespace`` is offered as ``<namespace>__<name>``, a ``custom`` tool as a function
taking one string ``input``, and ``shell`` / ``local_shell`` / ``apply_patch`` / client-side
``tool_search`` as functions with their fixed parameters. The model's calls come back out as the
items the client expects (``function_call`` with ``namespace``, ``custom_tool_call``,
``shell_call``...), and those items and their outputs go back in as function calls and results.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from pydantic import TypeAdapter, ValidationError

from responsa.protocol import (
    ApplyPatchCall,
    ApplyPatchCallOutput,
    CustomTool,
    CustomToolCall,
    CustomToolCallOutput,
    FunctionCall,
    FunctionCallOutput,
    FunctionTool,
    InvalidRequest,
    Item,
    LocalShellAction,
    LocalShellCall,
    LocalShellCallOutput,
    NamespaceTool,
    ShellAction,
    ShellCall,
    ShellCallOutput,
    Tool,
    ToolSearchCall,
    ToolSearchOutput,
    ToolSearchTool,
    item_text,
    new_id,
)

__all__ = [
    "ClientCall",
    "ClientRoute",
    "ClientTools",
    "InputDecoder",
    "client_items",
    "finish_call",
    "new_call",
    "plan_client_tools",
]

Kind = Literal["function", "custom", "shell", "local_shell", "apply_patch", "tool_search"]
ClientCall = FunctionCall | CustomToolCall | ShellCall | LocalShellCall | ApplyPatchCall | ToolSearchCall

_SEPARATOR = "__"
_INPUT_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"input": {"type": "string", "description": "The tool's input, written as its format says."}},
    "required": ["input"],
    "additionalProperties": False,
}
_FIXED_TOOLS: dict[str, tuple[str, dict[str, Any]]] = {
    "shell": (
        "Run shell commands on the user's machine, in order; their output comes back.",
        {
            "type": "object",
            "properties": {
                "commands": {"type": "array", "items": {"type": "string"}, "description": "Shell commands."},
                "timeout_ms": {"type": "integer"},
            },
            "required": ["commands"],
        },
    ),
    "local_shell": (
        "Run one command (an argv list) on the user's machine; its output comes back.",
        {
            "type": "object",
            "properties": {
                "command": {"type": "array", "items": {"type": "string"}, "description": "The command and arguments."},
                "working_directory": {"type": "string"},
                "timeout_ms": {"type": "integer"},
            },
            "required": ["command"],
        },
    ),
    "apply_patch": (
        "Create, update or delete a file on the user's machine. For update_file, 'diff' is a V4A diff.",
        {
            "type": "object",
            "properties": {
                "type": {"type": "string", "enum": ["create_file", "update_file", "delete_file"]},
                "path": {"type": "string"},
                "diff": {"type": "string"},
            },
            "required": ["type", "path"],
        },
    ),
}
_tools_adapter: TypeAdapter[list[Tool]] = TypeAdapter(list[Tool])


@dataclass(frozen=True)
class ClientRoute:
    """Where a model-visible tool name leads: the kind of item, the client's name and namespace."""

    kind: Kind
    name: str
    namespace: str | None = None
    custom: CustomTool | None = None


@dataclass
class ClientTools:
    """The client's tools as the model sees them, and the way back from the model's names."""

    tools: list[FunctionTool] = field(default_factory=list)
    routes: dict[str, ClientRoute] = field(default_factory=dict)

    def model_name(self, name: str, namespace: str | None) -> str:
        return f"{namespace}{_SEPARATOR}{name}" if namespace else name

    def add(self, tool: FunctionTool, route: ClientRoute, param: str) -> None:
        if tool.name in self.routes:
            raise InvalidRequest(f"Duplicate tool name '{tool.name}'.", param=f"{param}.name")
        self.routes[tool.name] = route
        self.tools.append(tool)

    def grammars(self) -> dict[str, tuple[str, str]]:
        """The custom tools whose input has a grammar: ``(syntax, definition)`` by model-visible name."""
        found: dict[str, tuple[str, str]] = {}
        for name, route in self.routes.items():
            fmt = route.custom.format if route.custom is not None else None
            if fmt is not None and fmt.type == "grammar" and fmt.syntax and fmt.definition:
                found[name] = (fmt.syntax, fmt.definition)
        return found

    def names_in(self, namespace: str) -> list[str]:
        return [name for name, route in self.routes.items() if route.namespace == namespace]


def plan_client_tools(tools: Sequence[Tool], context: Iterable[Item] = ()) -> ClientTools:
    """The client-run tools of a request, plus those a ``tool_search_output`` in the context made
    available; 400 for duplicate names."""
    found: list[Tool] = []
    for item in context:
        if isinstance(item, ToolSearchOutput):
            try:
                found += _tools_adapter.validate_python(item.tools)
            except ValidationError:
                continue  # what the client's search returned is its business; skip what we cannot read
    plan = ClientTools()
    for index, tool in enumerate([*tools, *found]):
        param = f"tools[{index}]"
        if isinstance(tool, NamespaceTool):
            for inner in tool.tools:
                _add_named(plan, inner, tool.name, param)
        elif isinstance(tool, FunctionTool | CustomTool):
            _add_named(plan, tool, None, param)
        elif isinstance(tool, ToolSearchTool) and tool.execution == "client":
            parameters = tool.parameters or {"type": "object", "properties": {"query": {"type": "string"}}}
            function = FunctionTool(name="tool_search", description=tool.description, parameters=parameters)
            plan.add(function, ClientRoute("tool_search", "tool_search"), param)
        elif tool.type in _FIXED_TOOLS:
            description, parameters = _FIXED_TOOLS[tool.type]
            kind: Kind = tool.type  # type: ignore[assignment]  # one of the fixed tool types
            plan.add(
                FunctionTool(name=tool.type, description=description, parameters=parameters),
                ClientRoute(kind, tool.type),
                param,
            )
    return plan


def _add_named(plan: ClientTools, tool: FunctionTool | CustomTool, namespace: str | None, param: str) -> None:
    name = plan.model_name(tool.name, namespace)
    if isinstance(tool, FunctionTool):
        function = tool if namespace is None else tool.model_copy(update={"name": name})
        plan.add(function, ClientRoute("function", tool.name, namespace), param)
        return
    function = FunctionTool(name=name, description=_custom_description(tool), parameters=_INPUT_SCHEMA)
    plan.add(function, ClientRoute("custom", tool.name, namespace, custom=tool), param)


def _custom_description(tool: CustomTool) -> str:
    text = tool.description or ""
    fmt = tool.format
    if fmt is not None and fmt.type == "grammar" and fmt.definition:
        text += f"\n\nThe input must match this {fmt.syntax} grammar:\n{fmt.definition}"
    return text.strip()


def new_call(route: ClientRoute, call_id: str | None) -> ClientCall:
    """The item a model call opens, before its arguments arrive."""
    call_id = call_id or new_id("call")
    if route.kind == "custom":
        return CustomToolCall(id=new_id("ctc"), call_id=call_id, name=route.name, input="", namespace=route.namespace)
    if route.kind == "shell":
        return ShellCall(id=new_id("sh"), call_id=call_id, action=ShellAction(commands=[]), status="in_progress")
    if route.kind == "local_shell":
        action = LocalShellAction(command=[])
        return LocalShellCall(id=new_id("lsh"), call_id=call_id, action=action, status="in_progress")
    if route.kind == "apply_patch":
        return ApplyPatchCall(id=new_id("apc"), call_id=call_id, operation={}, status="in_progress")
    if route.kind == "tool_search":
        return ToolSearchCall(id=new_id("ts"), call_id=call_id, arguments={}, status="in_progress")
    return FunctionCall(
        id=new_id("fc"), call_id=call_id, name=route.name, arguments="", namespace=route.namespace, status="in_progress"
    )


def finish_call(item: ClientCall, arguments: str) -> None:
    """Fill a call item from the model's complete JSON arguments."""
    if isinstance(item, FunctionCall):
        item.arguments = arguments
        return
    if isinstance(item, CustomToolCall):
        item.input = InputDecoder.final(arguments)
        return
    values = _object(arguments)
    if isinstance(item, ShellCall):
        item.action = ShellAction(commands=_strings(values.get("commands")), timeout_ms=_int(values.get("timeout_ms")))
    elif isinstance(item, LocalShellCall):
        item.action = LocalShellAction(
            command=_strings(values.get("command")),
            working_directory=values.get("working_directory")
            if isinstance(values.get("working_directory"), str)
            else None,
            timeout_ms=_int(values.get("timeout_ms")),
        )
    elif isinstance(item, ApplyPatchCall):
        item.operation = {key: values[key] for key in ("type", "path", "diff") if isinstance(values.get(key), str)}
    else:
        item.arguments = values


def _object(arguments: str) -> dict[str, Any]:
    try:
        value = json.loads(arguments or "{}")
    except json.JSONDecodeError:
        return {}
    return value if isinstance(value, dict) else {}


def _strings(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value]
    return [str(entry) for entry in value] if isinstance(value, list) else []


def _int(value: Any) -> int | None:
    return int(value) if isinstance(value, int | float) and not isinstance(value, bool) else None


_UNICODE_TAIL = re.compile(r"\\u[0-9a-fA-F]{0,3}$")


def _complete_escapes(body: str) -> str:
    """``body`` without a trailing escape sequence that has not fully arrived."""
    if (len(body) - len(body.rstrip("\\"))) % 2:
        return body[:-1]
    tail = _UNICODE_TAIL.search(body)
    if tail is not None and (tail.start() - len(body[: tail.start()].rstrip("\\"))) % 2 == 0:
        return body[: tail.start()]
    return body


class InputDecoder:
    """The text of a custom tool's ``input`` while its JSON arguments (``{"input": "..."}``) stream in,
    so ``response.custom_tool_call_input.delta`` events carry text, not JSON."""

    def __init__(self) -> None:
        self._raw = ""
        self._sent = 0

    def feed(self, chunk: str) -> str:
        """The input text this chunk adds ('' while inside an escape or before the value starts)."""
        self._raw += chunk
        text = self._decoded()
        if len(text) <= self._sent:
            return ""
        delta, self._sent = text[self._sent :], len(text)
        return delta

    def _decoded(self) -> str:
        match = re.search(r'"input"\s*:\s*"', self._raw)
        if match is None:
            return ""
        body = self._raw[match.end() :]
        end = re.search(r'(?<!\\)(?:\\\\)*"', body)
        if end is not None:
            body = body[: end.end() - 1]
        else:
            body = _complete_escapes(body)
        try:
            return str(json.loads(f'"{body}"'))
        except json.JSONDecodeError:
            return ""

    @staticmethod
    def final(arguments: str) -> str:
        """The whole input: the ``input`` string, else the arguments as the model wrote them."""
        value = _object(arguments).get("input")
        return value if isinstance(value, str) else arguments


def client_items(items: Sequence[Item], plan: ClientTools) -> list[Item]:
    """The context as the model reads it: every client tool call as a function call with its result."""
    seen: list[Item] = []
    for item in items:
        call = _as_function_call(item, plan)
        if call is not None:
            seen.append(call)
            continue
        output = _as_function_output(item)
        seen.append(output if output is not None else item)
    return seen


def _as_function_call(item: Item, plan: ClientTools) -> FunctionCall | None:
    arguments: Any
    if isinstance(item, FunctionCall):
        if item.namespace is None:
            return None
        name, arguments = plan.model_name(item.name, item.namespace), item.arguments
    elif isinstance(item, CustomToolCall):
        name, arguments = plan.model_name(item.name, item.namespace), {"input": item.input}
    elif isinstance(item, ShellCall | LocalShellCall):
        name, arguments = item.type.removesuffix("_call"), item.action.model_dump(exclude={"type", "env"})
    elif isinstance(item, ApplyPatchCall):
        name, arguments = "apply_patch", item.operation
    elif isinstance(item, ToolSearchCall):
        name, arguments = "tool_search", item.arguments
    else:
        return None
    text = arguments if isinstance(arguments, str) else json.dumps(arguments)
    return FunctionCall(
        id=item.id, call_id=item.call_id or item.id or "", name=name, arguments=text, status="completed"
    )


def _as_function_output(item: Item) -> FunctionCallOutput | None:
    if isinstance(item, CustomToolCallOutput):
        call_id, output = item.call_id, item_text(item)
    elif isinstance(item, ShellCallOutput):
        call_id, output = (
            item.call_id,
            "\n".join(_shell_result(entry.stdout, entry.stderr, entry.outcome) for entry in item.output),
        )
    elif isinstance(item, LocalShellCallOutput):
        call_id, output = item.id, item.output
    elif isinstance(item, ApplyPatchCallOutput):
        call_id, output = item.call_id, f"{item.status}: {item.output or ''}".strip()
    elif isinstance(item, ToolSearchOutput):
        found = [f"{tool.get('name') or tool.get('type')}: {tool.get('description') or ''}" for tool in item.tools]
        call_id, output = item.call_id or item.id or "", "Tools now available:\n" + "\n".join(found)
    else:
        return None
    return FunctionCallOutput(id=item.id, call_id=call_id, output=output, status="completed")


def _shell_result(stdout: str, stderr: str, outcome: dict[str, Any] | None) -> str:
    parts = [stdout]
    if stderr:
        parts.append(f"stderr:\n{stderr}")
    if outcome is not None:
        parts.append(f"exit code {outcome['exit_code']}" if "exit_code" in outcome else str(outcome.get("type")))
    return "\n".join(part for part in parts if part)
