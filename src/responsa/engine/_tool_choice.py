"""``tool_choice`` in all its forms: checked against the request's tools, then resolved into what the
model may call (the tools it sees, the mode, the one tool it must call)."""

from __future__ import annotations

from collections.abc import Collection, Mapping
from dataclasses import dataclass

from responsa.backends import ToolMode
from responsa.protocol import (
    AllowedTools,
    CreateResponseRequest,
    FunctionTool,
    HostedToolChoice,
    InvalidRequest,
    McpTool,
    NamedCustomChoice,
    NamedFunctionChoice,
    ToolRef,
)

from .tools import ClientRoute, ClientTools

__all__ = ["HOSTED_TOOLS", "ToolPolicy", "after_forced_round", "check_tool_choice", "resolve_tool_choice"]

HOSTED_TOOLS = frozenset({"web_search", "web_search_preview", "file_search", "code_interpreter", "image_generation"})
"""Built-in tools; run when the model's backend runs them (the simulator does), else see the hosted-tool policy."""


def _by_type(kind: str, client: ClientTools) -> bool:
    """Whether a choice ``{"type": kind}`` names one of the request's client tools by type alone
    (``shell``, ``apply_patch``, ``tool_search``, a plug-in's kind): its model-visible name is the type."""
    route = client.routes.get(kind)
    return route is not None and route.kind == kind and kind not in ("function", "custom")


@dataclass(frozen=True)
class ToolPolicy:
    """What the model may do this turn."""

    tools: list[FunctionTool]
    hosted: list[str]
    mode: ToolMode
    forced: str | None = None


def _named(choice: NamedFunctionChoice | NamedCustomChoice, client: ClientTools) -> str | None:
    """The model-visible name of the function or custom tool a choice names, if the request has it."""
    matches = [
        name
        for name, route in client.routes.items()
        if route.kind == choice.type
        and choice.namespace in (None, route.namespace)
        and choice.name in (route.name, name)
    ]
    return matches[0] if len(matches) == 1 else None


def _hosted_types(request: CreateResponseRequest) -> set[str]:
    return {tool.type for tool in request.tools if tool.type in HOSTED_TOOLS}


def _ref_known(ref: ToolRef, request: CreateResponseRequest, client: ClientTools, labels: set[str]) -> bool:
    if ref.type == "mcp":
        return ref.server_label in labels
    if ref.type == "namespace":
        return bool(ref.name) and bool(client.names_in(ref.name or ""))
    if ref.type in ("function", "custom"):
        return any(_ref_matches(ref, name, route) for name, route in client.routes.items())
    return ref.type in client.routes or ref.type in _hosted_types(request)


def _ref_matches(ref: ToolRef, name: str, route: ClientRoute) -> bool:
    if ref.type == "namespace":
        return route.namespace is not None and ref.name == route.namespace
    if ref.type in ("function", "custom"):
        return ref.type == route.kind and ref.name in (route.name, name) and ref.namespace in (None, route.namespace)
    return ref.type == route.kind == name and ref.type not in ("function", "custom")


def check_tool_choice(request: CreateResponseRequest, client: ClientTools) -> None:
    """400 for a choice that names a tool the request does not have."""
    choice = request.tool_choice
    labels = {tool.server_label for tool in request.tools if isinstance(tool, McpTool)}
    if choice == "required" and not client.tools and not labels and not _hosted_types(request):
        raise InvalidRequest("tool_choice 'required' needs at least one tool in 'tools'.", param="tool_choice")
    if isinstance(choice, NamedFunctionChoice | NamedCustomChoice) and _named(choice, client) is None:
        raise InvalidRequest(f"Tool choice '{choice.name}' not found in 'tools' parameter.", param="tool_choice")
    if isinstance(choice, AllowedTools):
        for index, ref in enumerate(choice.tools):
            if not _ref_known(ref, request, client, labels):
                raise InvalidRequest(
                    f"Allowed tool {ref.name or ref.type!r} not found in 'tools' parameter.",
                    param=f"tool_choice.tools[{index}]",
                )
    if isinstance(choice, HostedToolChoice):
        known = (
            choice.server_label in labels
            if choice.type == "mcp"
            else choice.type in _hosted_types(request) or _by_type(choice.type, client)
        )
        if not known:
            raise InvalidRequest(
                f"Tool choice {choice.type!r} needs a matching tool in 'tools'.",
                param="tool_choice",
                code="unsupported_value",
            )


def resolve_tool_choice(
    request: CreateResponseRequest,
    client: ClientTools,
    mcp_tools: list[FunctionTool],
    mcp_routes: Mapping[str, str],
    unavailable: Collection[str] = (),
) -> ToolPolicy:
    """The tools the model sees under ``tool_choice``; hosted tools in ``unavailable`` are left out."""
    tools = [*client.tools, *mcp_tools]
    hosted = [kind for kind in _hosted_types(request) if kind not in unavailable]
    choice = request.tool_choice
    if isinstance(choice, str):
        return ToolPolicy(tools, hosted, choice)
    if isinstance(choice, NamedFunctionChoice | NamedCustomChoice):
        return ToolPolicy(tools, hosted, "required", _named(choice, client))
    if isinstance(choice, AllowedTools):
        allowed = [tool for tool in tools if _allowed(tool.name, choice, client.routes, mcp_routes)]
        types = {ref.type for ref in choice.tools}
        return ToolPolicy(allowed, [kind for kind in hosted if kind in types], choice.mode)
    if choice.type in HOSTED_TOOLS:  # {"type": "web_search"}
        if mcp_routes.get(choice.type) == choice.type:  # run by the server as a function (file_search)
            return ToolPolicy([tool for tool in tools if tool.name == choice.type], [], "required", choice.type)
        return ToolPolicy([], [choice.type], "required")
    if _by_type(choice.type, client):  # {"type": "shell"}
        return ToolPolicy(tools, hosted, "required", choice.type)
    # {"type": "mcp", "server_label", "name"?}
    tools = [tool for tool in tools if mcp_routes.get(tool.name) == choice.server_label]
    forced = next((tool.name for tool in tools if choice.name and tool.name.endswith(choice.name)), None)
    return ToolPolicy(tools, hosted, "required", forced)


def _allowed(name: str, choice: AllowedTools, routes: Mapping[str, ClientRoute], mcp_routes: Mapping[str, str]) -> bool:
    label = mcp_routes.get(name)
    if label is not None:
        return any(ref.type == "mcp" and ref.server_label == label and ref.name in (None, name) for ref in choice.tools)
    route = routes.get(name)
    return route is not None and any(_ref_matches(ref, name, route) for ref in choice.tools)


def after_forced_round(request: CreateResponseRequest) -> CreateResponseRequest:
    """The request for the round after one whose tool calls the server ran: a choice that forced a
    call (``required``, a named tool, ``allowed_tools`` in ``required`` mode) has been met, so the
    model now chooses freely (``auto``), as OpenAI does. Forcing again would call the same tool
    until the round cap, whatever the kind."""
    choice = request.tool_choice
    if choice in ("auto", "none"):
        return request
    relaxed: object = choice.model_copy(update={"mode": "auto"}) if isinstance(choice, AllowedTools) else "auto"
    return request.model_copy(update={"tool_choice": relaxed})
