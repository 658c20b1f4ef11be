"""``tool_search`` run by the client (``execution: "client"``): the model searches for tools held back
from it; the tools the client's ``tool_search_output`` returns are offered from then on (see
``plan_client_tools``). Run by the server (OpenAI's default) it is not served yet: a 400 naming
``tools[i].execution``, never a tool silently left out."""

from __future__ import annotations

from typing import Any

from responsa.protocol import FunctionTool, InvalidRequest, Tool, ToolSearchCall, ToolSearchOutput, ToolSearchTool

from ._fixed import FixedKind

__all__ = ["TOOL_SEARCH"]

_QUERY = {"type": "object", "properties": {"query": {"type": "string"}}}


def _offered(tool: Tool, param: str) -> FunctionTool | None:
    if not isinstance(tool, ToolSearchTool):
        return None
    if tool.execution != "client":  # OpenAI's default: the server searches; not served here yet
        raise InvalidRequest("Tool search run by the server is not served here yet: give 'execution': 'client' "
                             "(the client answers each tool_search_call).", param=f"{param}.execution",
                             code="unsupported_value")  # fmt: skip
    return FunctionTool(name="tool_search", description=tool.description, parameters=tool.parameters or _QUERY)


def _fill(item: ToolSearchCall, values: dict[str, Any]) -> None:
    item.arguments = values


def _found(output: ToolSearchOutput) -> tuple[str, str]:
    found = [f"{tool.get('name') or tool.get('type')}: {tool.get('description') or ''}" for tool in output.tools]
    return output.call_id or output.id or "", "Tools now available:\n" + "\n".join(found)


TOOL_SEARCH = FixedKind(
    name="tool_search",
    id_prefix="tsc",
    description="",
    parameters=_QUERY,
    new_item=lambda item_id, call_id: ToolSearchCall(id=item_id, call_id=call_id, arguments={}, status="in_progress"),
    fill=_fill,
    call_type=ToolSearchCall,
    call_arguments=lambda item: item.arguments,
    output_type=ToolSearchOutput,
    output_text=_found,
    offered=_offered,
)
