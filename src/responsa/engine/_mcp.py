"""MCP tools in a response: which tools the model sees, approvals, and the context the model reads.

The model only knows function calling: an ``mcp_call`` item reaches it as a function call and its
output; listings and approval requests stay out of its context.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from responsa.protocol import (
    Compaction,
    CreateResponseRequest,
    FileSearchCall,
    FunctionCall,
    FunctionCallOutput,
    FunctionTool,
    InvalidRequest,
    Item,
    McpApprovalRequest,
    McpApprovalResponse,
    McpCall,
    McpListTools,
    McpTool,
    new_id,
)
from responsa.tools import CallOutcome, McpClient, McpConnector, SimulatedMcp

from ._file_search import as_function_call

__all__ = ["McpPlan", "approved_calls", "check_approvals", "check_mcp_tools", "model_items", "plan_mcp"]


@dataclass
class McpPlan:
    """The MCP servers of a request and the tools of theirs the model may call."""

    servers: dict[str, McpTool]
    clients: dict[str, McpClient]
    """Server label → what reaches it (the connector, or the simulator's stand-in)."""
    tools: list[FunctionTool] = field(default_factory=list)
    routes: dict[str, str] = field(default_factory=dict)
    """Model-visible tool name → server label."""

    def needs_approval(self, label: str, name: str) -> bool:
        return self.servers[label].needs_approval(name)

    async def call(self, label: str, name: str, arguments: str) -> CallOutcome:
        return await self.clients[label].call_tool(self.servers[label], name, arguments)


def check_mcp_tools(request: CreateResponseRequest, connector: McpConnector, simulated: bool) -> McpPlan:
    """The request's MCP servers by label and what reaches each (their tools are listed by
    :func:`plan_mcp`); 400 for a duplicate label or a URL the policy refuses, except on a
    ``simulated`` model, where such a server is simulated and never contacted."""
    servers: dict[str, McpTool] = {}
    clients: dict[str, McpClient] = {}
    for index, tool in enumerate(request.tools):
        if not isinstance(tool, McpTool):
            continue
        if tool.server_label in servers:
            raise InvalidRequest(
                f"Duplicate MCP server_label '{tool.server_label}'.", param=f"tools[{index}].server_label"
            )
        clients[tool.server_label] = connector
        try:
            connector.policy.check(tool.server_url, f"tools[{index}].server_url")
        except InvalidRequest as refused:
            if not simulated or refused.code != "mcp_url_not_allowed":
                raise
            clients[tool.server_label] = SimulatedMcp()
        servers[tool.server_label] = tool
    return McpPlan(servers, clients)


async def plan_mcp(plan: McpPlan, history: Sequence[Item], taken: set[str]) -> list[McpListTools]:
    """Each server's tools, reused from a listing earlier in the conversation or listed now, added to
    ``plan``; the listings made now."""
    cached = {item.server_label: item for item in history if isinstance(item, McpListTools) and not item.error}
    fresh: list[McpListTools] = []
    for label, server in plan.servers.items():
        allowed = server.allowed_names()
        listing = cached.get(label)
        if listing is None:
            tools, error = await plan.clients[label].list_tools(server)
            if allowed is not None:  # the listing shows what the model may use, as OpenAI's does
                tools = [tool for tool in tools if tool.name in allowed]
            listing = McpListTools(id=new_id("mcpl"), server_label=label, tools=tools, error=error)
            fresh.append(listing)
        for tool in listing.tools:
            if allowed is not None and tool.name not in allowed:
                continue
            name = tool.name if tool.name not in taken else f"{label}_{tool.name}"
            taken.add(name)
            plan.routes[name] = label
            plan.tools.append(FunctionTool(name=name, description=tool.description, parameters=tool.input_schema))
    return fresh


def _approval_pairs(
    history: Sequence[Item], input_items: Sequence[Item]
) -> list[tuple[McpApprovalRequest, McpApprovalResponse]]:
    requests = {item.id: item for item in history if isinstance(item, McpApprovalRequest)}
    pairs = []
    for index, item in enumerate(input_items):
        if isinstance(item, McpApprovalResponse):
            request = requests.get(item.approval_request_id)
            if request is None:
                raise InvalidRequest(
                    f"No mcp_approval_request with id '{item.approval_request_id}' in this conversation.",
                    param=f"input[{index}].approval_request_id",
                )
            pairs.append((request, item))
    return pairs


def check_approvals(plan: McpPlan | None, history: Sequence[Item], input_items: Sequence[Item]) -> None:
    """400 when an approval answers nothing, or names a server this request does not configure."""
    for request, _response in _approval_pairs(history, input_items):
        if plan is None or request.server_label not in plan.servers:
            raise InvalidRequest(
                f"The approved call needs the MCP server '{request.server_label}' in 'tools'.", param="tools"
            )


async def approved_calls(plan: McpPlan, history: Sequence[Item], input_items: Sequence[Item]) -> list[McpCall]:
    """Run the calls the client approved; declined ones are not run."""
    calls = []
    for request, response in _approval_pairs(history, input_items):
        if not response.approve:
            continue
        outcome = await plan.call(request.server_label, request.name, request.arguments)
        calls.append(
            McpCall(
                id=new_id("mcp"),
                server_label=request.server_label,
                name=request.name,
                arguments=request.arguments,
                output=outcome.output,
                error=outcome.error,
                approval_request_id=request.id,
            )
        )
    return calls


def model_items(items: Sequence[Item]) -> list[Item]:
    """The context as the model reads it: MCP calls as function calls with outputs."""
    requests = {item.id: item for item in items if isinstance(item, McpApprovalRequest)}
    seen: list[Item] = []
    for item in items:
        if isinstance(item, McpCall):
            seen += _as_function(item.id or new_id("mcp"), item.name, item.arguments, _call_result(item))
        elif isinstance(item, FileSearchCall) and item.results is not None:
            seen += as_function_call(item)  # the server's search (its results are stored: later turns too)
        elif isinstance(item, McpApprovalResponse) and not item.approve:
            request = requests.get(item.approval_request_id)
            if request is not None:
                why = f": {item.reason}" if item.reason else "."
                seen += _as_function(
                    request.id or "", request.name, request.arguments, f"The user declined this call{why}"
                )
        elif not isinstance(item, McpListTools | McpApprovalRequest | McpApprovalResponse | Compaction):
            seen.append(item)
    return seen


def _call_result(call: McpCall) -> str:
    if call.error is None:
        return call.output or ""
    return f"Error: {call.error.get('message') or call.error}"


def _as_function(call_id: str, name: str, arguments: str, output: str) -> list[Item]:
    return [
        FunctionCall(id=call_id, call_id=call_id, name=name, arguments=arguments, status="completed"),
        FunctionCallOutput(call_id=call_id, output=output, status="completed"),
    ]
