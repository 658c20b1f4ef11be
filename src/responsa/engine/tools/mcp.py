"""``mcp`` tools, run by the server: each server's tools are listed (or reused from a listing earlier
in the conversation) and offered to the model as functions; a call becomes an ``mcp_call`` the server
makes between model turns, or an ``mcp_approval_request`` the client answers first. Listings and
approvals stay out of the model's context; a call reaches it as a function call and its output.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Mapping, Sequence
from dataclasses import dataclass
from functools import partial
from typing import Any, ClassVar

from responsa import tracing
from responsa.config import Settings
from responsa.external import CallOutcome, McpClient, McpConnector, SimulatedMcp, UrlPolicy
from responsa.protocol import (
    FunctionCall,
    FunctionCallOutput,
    FunctionTool,
    InvalidRequest,
    Item,
    McpApprovalRequest,
    McpApprovalResponse,
    McpCall,
    McpCallArgumentsDelta,
    McpCallArgumentsDone,
    McpItemEvent,
    McpListTools,
    McpTool,
    OutputItemEvent,
    StreamEvent,
    Tool,
    ToolRef,
    new_id,
)

from ._kind import Closed, ItemEnd, Recorded, Replay, Route, ServerContext, ToolPlan, ToolSetup, Where

__all__ = ["McpKind"]


@dataclass(frozen=True)
class McpServer:
    """One of the request's MCP servers, and what reaches it (the connector, or the simulator's stand-in)."""

    tool: McpTool
    client: McpClient

    @property
    def label(self) -> str:
        return self.tool.server_label

    async def call(self, name: str, arguments: str) -> CallOutcome:
        return await self.client.call_tool(self.tool, name, arguments)


def _servers(setup: ToolSetup, connector: McpConnector) -> dict[str, McpServer]:
    """The request's MCP servers by label; 400 for a duplicate label or a URL the policy refuses, except
    on a simulated model, where such a server is simulated and never contacted."""
    servers: dict[str, McpServer] = {}
    for index, tool in enumerate(setup.request.tools):
        if not isinstance(tool, McpTool):
            continue
        if tool.server_label in servers:
            raise InvalidRequest(
                f"Duplicate MCP server_label '{tool.server_label}'.", param=f"tools[{index}].server_label"
            )
        client: McpClient = connector
        try:
            connector.policy.check(tool.server_url, f"tools[{index}].server_url")
        except InvalidRequest as refused:
            if not setup.simulated or refused.code != "mcp_url_not_allowed":
                raise
            client = SimulatedMcp()
        servers[tool.server_label] = McpServer(tool, client)
    return servers


async def _offer(servers: dict[str, McpServer], setup: ToolSetup) -> list[McpListTools]:
    """Each server's tools, from a listing earlier in the conversation or listed now, offered to the
    model; the listings made now."""
    cached = {item.server_label: item for item in setup.history if isinstance(item, McpListTools) and not item.error}
    fresh: list[McpListTools] = []
    for label, server in servers.items():
        allowed = server.tool.allowed_names()
        listing = cached.get(label)
        if listing is None:
            tools, error = await server.client.list_tools(server.tool)
            if allowed is not None:  # the listing shows what the model may use, as OpenAI's does
                tools = [tool for tool in tools if tool.name in allowed]
            listing = McpListTools(id=new_id("mcpl"), server_label=label, tools=tools, error=error)
            fresh.append(listing)
        for tool in listing.tools:
            if allowed is not None and tool.name not in allowed:
                continue
            taken = tool.name in setup.tools.routes or tool.name in setup.tools.deferred
            name = f"{label}_{tool.name}" if taken else tool.name
            function = FunctionTool(name=name, description=tool.description, parameters=tool.input_schema)
            setup.tools.add(
                function, Route("mcp", tool.name, target=server), "tools", _loadable(server.tool, tool.name)
            )
    return fresh


def _loadable(tool: McpTool, name: str) -> dict[str, Any] | None:
    """A tool of a server marked ``defer_loading`` as a tool search's output lists it once loaded."""
    if not tool.defer_loading:
        return None
    return {"type": "mcp", "server_label": tool.server_label, "server_url": tool.server_url, "allowed_tools": [name]}


def _approvals(setup: ToolSetup) -> list[tuple[McpApprovalRequest, McpApprovalResponse]]:
    """The approval responses in the input with the requests they answer; 400 when one answers nothing.
    The history (a conversation's thousands of items, every turn) is searched only for an input that
    holds a response."""
    responses = [(index, item) for index, item in enumerate(setup.input_items) if isinstance(item, McpApprovalResponse)]
    if not responses:
        return []
    requests = {item.id: item for item in setup.history if isinstance(item, McpApprovalRequest)}
    pairs = []
    for index, item in responses:
        request = requests.get(item.approval_request_id)
        if request is None:
            raise InvalidRequest(
                f"No mcp_approval_request with id '{item.approval_request_id}' in this conversation.",
                param=f"input[{index}].approval_request_id",
            )
        pairs.append((request, item))
    return pairs


def _item_event(kind: str, where: Where) -> StreamEvent:
    return McpItemEvent.model_validate({"type": kind, **where})


def _added(item: McpCall | McpListTools, where: Where) -> StreamEvent:
    shown = (
        item.model_copy(update={"status": "in_progress", "output": None, "error": None})
        if isinstance(item, McpCall)
        else item.model_copy(update={"tools": [], "error": None})
    )
    return OutputItemEvent(type="response.output_item.added", output_index=where["output_index"], item=shown)


def _done(item: McpCall | McpListTools, where: Where) -> StreamEvent:
    return OutputItemEvent(type="response.output_item.done", output_index=where["output_index"], item=item.model_copy())


def _listing_events(listing: McpListTools, where: Where) -> list[StreamEvent]:
    outcome = "failed" if listing.error else "completed"
    return [
        _added(listing, where),
        _item_event("response.mcp_list_tools.in_progress", where),
        _item_event(f"response.mcp_list_tools.{outcome}", where),
        _done(listing, where),
    ]


def _approved_events(call: McpCall, where: Where) -> list[StreamEvent]:
    """An approved call, up to its run: added, in progress, its arguments."""
    return [
        _added(call, where),
        _item_event("response.mcp_call.in_progress", where),
        McpCallArgumentsDone(arguments=call.arguments, **where),
    ]


async def _run(
    server: McpServer, call: McpCall, context: ServerContext, where: Where
) -> AsyncIterator[list[StreamEvent]]:
    """Make the call; its outcome ends the item."""
    context.timeline.mark("mcp.call.started", item_id=call.id, name=call.name)
    with tracing.current(context.span):
        outcome = await server.call(call.name, call.arguments)
    context.timeline.mark("mcp.call.ended", item_id=call.id, error=outcome.error is not None)
    call.output, call.error = outcome.output, outcome.error
    call.status = "failed" if call.error else "completed"
    yield [_item_event(f"response.mcp_call.{call.status}", where), _done(call, where)]


@dataclass
class _Call:
    item: McpCall
    server: McpServer

    def opened(self, where: Where) -> Sequence[StreamEvent]:
        return [_item_event("response.mcp_call.in_progress", where)]

    def delta(self, chunk: str, where: Where) -> Sequence[StreamEvent]:
        return [McpCallArgumentsDelta.of_token(where["item_id"], where["output_index"], chunk)]

    def close(self, arguments: str, status: ItemEnd, where: Where) -> Closed:
        self.item.arguments = arguments
        done = McpCallArgumentsDone(arguments=arguments, **where)
        if status == "incomplete":
            self.item.status = "incomplete"
            return Closed([done])  # cut off: not run
        return Closed([done], run=partial(_run, self.server, self.item))


@dataclass
class _ApprovalRequest:
    item: McpApprovalRequest

    def opened(self, where: Where) -> Sequence[StreamEvent]:
        return ()

    def delta(self, chunk: str, where: Where) -> Sequence[StreamEvent]:
        return ()

    def close(self, arguments: str, status: ItemEnd, where: Where) -> Closed:
        self.item.arguments = arguments
        return Closed(needs_client=True)


class McpKind:
    """Lists and calls the request's MCP servers through the server's connector."""

    name = "mcp"
    tool_types = ("mcp",)
    item_types: ClassVar[Mapping[str, str]] = {
        "mcp_call": "mcp",
        "mcp_list_tools": "mcpl",
        "mcp_approval_request": "mcpr",
        "mcp_approval_response": "mcpa",
    }

    def __init__(self, connector: McpConnector) -> None:
        self._connector = connector

    @classmethod
    def configured(cls, settings: Settings) -> McpKind:
        """The connector the settings ask for: its timeouts, and the hosts it may reach (loopback only on
        a server without API keys, or by name in ``--mcp-allow-hosts``)."""
        policy = UrlPolicy(settings.mcp_allow_hosts, allow_loopback=not settings.api_keys)
        return cls(McpConnector(settings.mcp_call_timeout_secs, settings.mcp_list_timeout_secs, policy))

    def offer(self, tool: Tool, tools: ToolPlan, param: str) -> None:
        """Nothing is offered without the server's connector (see :meth:`prepare`); what the tool asks
        that no MCP server here can do is a 400 now."""
        if not isinstance(tool, McpTool):
            return
        for field, what in (("connector_id", "OpenAI's service connectors"), ("tunnel_id", "Secure MCP Tunnels")):
            if getattr(tool, field) is not None:
                raise InvalidRequest(f"'{field}' is not supported: {what} are not reachable from this server; "
                                     "give the MCP server's 'server_url'.", param=f"{param}.{field}",
                                     code="unsupported_parameter")  # fmt: skip
        if tool.allowed_callers is not None and "direct" not in tool.allowed_callers:
            raise InvalidRequest("Only 'direct' calls of MCP tools are made here: 'allowed_callers' must include it.",
                                 param=f"{param}.allowed_callers", code="unsupported_value")  # fmt: skip

    async def prepare(self, setup: ToolSetup) -> list[Recorded]:
        """List the servers' tools and offer them; run the calls the client approved (declined ones are not)."""
        servers = _servers(setup, self._connector)
        approvals = _approvals(setup)
        for request, _response in approvals:
            if request.server_label not in servers:
                raise InvalidRequest(
                    f"The approved call needs the MCP server '{request.server_label}' in 'tools'.", param="tools"
                )
        if not servers:
            return []
        recorded = [Recorded(listing, partial(_listing_events, listing)) for listing in await _offer(servers, setup)]
        for request, response in approvals:
            if response.approve:
                call = McpCall(id=new_id("mcp"), server_label=request.server_label, name=request.name,
                               arguments=request.arguments, approval_request_id=request.id)  # fmt: skip
                server = servers[request.server_label]
                recorded.append(Recorded(call, partial(_approved_events, call), partial(_run, server, call)))
        return recorded

    def open_call(self, route: Route, call_id: str) -> _Call | _ApprovalRequest:
        server: McpServer = route.target
        if server.tool.needs_approval(route.name):
            return _ApprovalRequest(McpApprovalRequest(id=new_id("mcpr"), server_label=server.label, name=route.name,
                                                       arguments=""))  # fmt: skip
        return _Call(McpCall(id=new_id("mcp"), server_label=server.label, name=route.name, arguments="",
                             status="in_progress"), server)  # fmt: skip

    def chosen(self, ref: ToolRef, name: str, route: Route) -> bool:
        server: McpServer = route.target
        return ref.type == "mcp" and ref.server_label == server.label and ref.name in (None, route.name, name)

    def replay(self, item: Item, context: Replay) -> list[Item] | None:
        if isinstance(item, McpCall):
            return _as_function(item.id or new_id("mcp"), item.name, item.arguments, _call_result(item))
        if isinstance(item, McpApprovalResponse) and not item.approve:
            request = context.find(item.approval_request_id)
            if isinstance(request, McpApprovalRequest):
                why = f": {item.reason}" if item.reason else "."
                return _as_function(request.id or "", request.name, request.arguments,
                                    f"The user declined this call{why}")  # fmt: skip
        return []  # listings, requests and approvals are not the model's to read


def _call_result(call: McpCall) -> str:
    if call.error is None:
        return call.output or ""
    return f"Error: {call.error.get('message') or call.error}"


def _as_function(call_id: str, name: str, arguments: str, output: str) -> list[Item]:
    return [
        FunctionCall(id=call_id, call_id=call_id, name=name, arguments=arguments, status="completed"),
        FunctionCallOutput(call_id=call_id, output=output, status="completed"),
    ]
