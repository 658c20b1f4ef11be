"""``tool_choice`` in all its forms: checked against the request's tools, then resolved into what the
model may call (the tools it sees, the mode, the one tool it must call)."""

from __future__ import annotations

from collections.abc import AsyncIterator, Collection
from dataclasses import dataclass

from responsa.backends import ModelEvent, ModelRequest, ToolCallDelta, ToolMode
from responsa.protocol import (
    AllowedTools,
    CreateResponseRequest,
    FunctionTool,
    HostedToolChoice,
    InvalidRequest,
    McpTool,
    ModelError,
    NamedCustomChoice,
    NamedFunctionChoice,
    ToolRef,
)

from ._kind import Route, ToolPlan

__all__ = ["ToolPolicy", "after_forced_round", "check_tool_choice", "held_to_choice", "resolve_tool_choice"]


def _by_type(kind: str, client: ToolPlan) -> bool:
    """Whether a choice ``{"type": kind}`` names one of the request's client tools by type alone
    (``shell``, ``apply_patch``, ``tool_search``, a plug-in's kind): its model-visible name is the type."""
    route = client.routes.get(kind)
    return route is not None and route.kind == kind and kind not in ("function", "custom")


@dataclass(frozen=True)
class ToolPolicy:
    """What the model may do this turn."""

    tools: list[FunctionTool]
    """Every definition the model reads (under ``allowed_tools`` too: they stay, so the prompt's cache holds)."""
    hosted: list[str]
    mode: ToolMode
    forced: str | None = None
    allowed: frozenset[str] | None = None
    """The names of ``tools`` the model may call, where not all."""


def _named(choice: NamedFunctionChoice | NamedCustomChoice, client: ToolPlan) -> str | None:
    """The model-visible name of the function or custom tool a choice names, if the request has it."""
    matches = [
        name
        for name, route in client.routes.items()
        if route.kind == choice.type
        and choice.namespace in (None, route.namespace)
        and choice.name in (route.name, name)
    ]
    return matches[0] if len(matches) == 1 else None


def _hosted_types(request: CreateResponseRequest, plan: ToolPlan) -> set[str]:
    """The request's hosted tools (see ``ToolRegistry.hosted_tool_types``)."""
    hosted = plan.kinds.hosted_tool_types()
    return {tool.type for tool in request.tools if tool.type in hosted}


def _planned_later(request: CreateResponseRequest, plan: ToolPlan) -> set[str]:
    """The request's tool types (hosted, or run by a server-run kind, which offers its tools after this
    check: a hosted shell) that a choice may name though the client plan has no tool of them yet."""
    return _hosted_types(request, plan) | {tool.type for tool in request.tools if plan.kinds.server_kinds([tool.type])}


def _ref_known(ref: ToolRef, request: CreateResponseRequest, client: ToolPlan, labels: set[str]) -> bool:
    if ref.type == "mcp":
        return ref.server_label in labels
    if ref.type == "namespace":
        return bool(ref.name) and bool(client.names_in(ref.name or ""))
    if ref.type in ("function", "custom"):
        return any(_ref_matches(client, ref, name, route) for name, route in client.routes.items())
    return ref.type in client.routes or ref.type in _planned_later(request, client)


def _ref_matches(plan: ToolPlan, ref: ToolRef, name: str, route: Route) -> bool:
    """Whether ``ref`` names the tool the model knows as ``name``: its kind says."""
    return plan.kinds.named(route.kind).chosen(ref, name, route)


def check_tool_choice(request: CreateResponseRequest, client: ToolPlan) -> None:
    """400 for a choice that names a tool the request does not have."""
    choice = request.tool_choice
    labels = {tool.server_label for tool in request.tools if isinstance(tool, McpTool)}
    if choice == "required" and not client.tools and not labels and not _planned_later(request, client):
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
            else choice.type in _planned_later(request, client) or _by_type(choice.type, client)
        )
        if not known:
            raise InvalidRequest(
                f"Tool choice {choice.type!r} needs a matching tool in 'tools'.",
                param="tool_choice",
                code="unsupported_value",
            )


def resolve_tool_choice(
    request: CreateResponseRequest, plan: ToolPlan, unavailable: Collection[str] = ()
) -> ToolPolicy:
    """The tools the model sees under ``tool_choice``; hosted tools in ``unavailable`` (the backend
    cannot run them, or the server runs them as tools in ``plan``) are left out."""
    tools = plan.tools
    hosted = [kind for kind in _hosted_types(request, plan) if kind not in unavailable]
    choice = request.tool_choice
    if isinstance(choice, str):
        return ToolPolicy(tools, hosted, choice)
    if isinstance(choice, NamedFunctionChoice | NamedCustomChoice):
        return ToolPolicy(tools, hosted, "required", _named(choice, plan))
    if isinstance(choice, AllowedTools):
        allowed = frozenset(
            tool.name
            for tool in tools
            if any(_ref_matches(plan, ref, tool.name, plan.routes[tool.name]) for ref in choice.tools)
        )
        types = {ref.type for ref in choice.tools}
        return ToolPolicy(tools, [kind for kind in hosted if kind in types], choice.mode, allowed=allowed)
    # {"type": "shell"}, {"type": "file_search"}, {"type": "mcp", "server_label", "name"?}: by the tools' kinds
    ref = ToolRef(type=choice.type, name=choice.name, server_label=choice.server_label)
    chosen = [tool for tool in tools if _ref_matches(plan, ref, tool.name, plan.routes[tool.name])]
    if not chosen:  # a hosted tool the backend runs: {"type": "web_search"}
        return ToolPolicy([], [choice.type] if choice.type in plan.kinds.hosted_tool_types() else [], "required")
    forced = chosen[0].name if len(chosen) == 1 else None
    return ToolPolicy(tools, [], "required", forced, frozenset(tool.name for tool in chosen))


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


async def held_to_choice(
    batches: AsyncIterator[list[ModelEvent]], request: ModelRequest
) -> AsyncIterator[list[ModelEvent]]:
    """The model's events, a call that ``tool_choice`` forbids stopped before anything sees it: the
    embedded model and the simulator cannot make one (their grammar and plan hold the choice), but an
    upstream may ignore the ``tool_choice`` it is sent. Such a call ends the turn in a ``ModelError``
    (``tool_choice_violated``): the response fails, naming the call, rather than hand the client a
    call it ruled out."""
    async for batch in batches:
        for event in batch:
            if type(event) is ToolCallDelta and event.name is not None and not request.may_call(event.name):
                raise ModelError(
                    f"The model called '{event.name}', which this request's tool_choice does not allow; "
                    "the call was not passed on.",
                    code="tool_choice_violated",
                )
        yield batch
