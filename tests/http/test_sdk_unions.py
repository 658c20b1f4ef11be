"""The openai package's unions walked member by member, so a new SDK release fails here until each
new shape has an answer: every input item type, every tool type and every stream event is served,
or refused with a 400 naming it, or (events) listed as not applicable with the reason. Nothing is
accepted and dropped: an item or tool type nothing reads is a 400 by construction (see
``_context._check_type`` and ``_checks._check_tools``), and these lists say which."""

from __future__ import annotations

import typing
from typing import Any

import httpx
import pytest
from openai.types.responses import (
    function_shell_tool_param,
    response_input_item_param,
    response_stream_event,
    tool_param,
    tool_search_tool_param,
)

from responsa.engine.tools import ToolRegistry
from responsa.external import probe_sandbox
from responsa.protocol import ITEM_TYPES, StreamEvent
from tests.in_process import InProcess


def _literals(annotation: Any) -> set[str]:
    found: set[str] = set()
    for arg in typing.get_args(annotation):
        found |= {arg} if isinstance(arg, str) else _literals(arg)
    return found


def union_types(union: Any) -> set[str]:
    """The ``type`` values of a union's members (TypedDicts, or the SDK's pydantic models)."""
    types: set[str] = set()
    for member in typing.get_args(union):
        if typing.get_origin(member) is typing.Annotated:
            member = typing.get_args(member)[0]
        fields = getattr(member, "model_fields", None)
        types |= _literals(fields["type"].annotation if fields else typing.get_type_hints(member)["type"])
    return types


REFUSED_ITEMS = {"computer_call", "computer_call_output", "program", "program_output"}
"""Input item types of the SDK no tool here makes or reads (no computer tool; programmatic tool calling
is not served): a 400 naming ``input[i].type``."""

NOT_EMITTED = {
    "response.audio.delta": "no model here speaks audio",
    "response.audio.done": "no model here speaks audio",
    "response.audio.transcript.delta": "no model here speaks audio",
    "response.audio.transcript.done": "no model here speaks audio",
}
"""Stream events of the SDK this server never emits, each with why."""

TOOL_SAMPLES: dict[str, dict[str, Any]] = {
    "function": {"name": "f", "parameters": {"type": "object", "properties": {}}},
    "custom": {"name": "c"},
    "namespace": {"name": "n", "description": "Tools.", "tools": [{"type": "function", "name": "g"}]},
    "mcp": {"server_label": "s", "server_url": "http://127.0.0.1:1/mcp"},
    "file_search": {"vector_store_ids": []},
    "tool_search": {"execution": "client"},
    "computer_use_preview": {"display_width": 1024, "display_height": 768, "environment": "linux"},
}
"""What a tool of each type needs beyond its type (the rest take ``{"type": ...}`` alone)."""
REFUSED_TOOLS = {"computer", "computer_use_preview", "programmatic_tool_calling"}
"""Tool types of the SDK refused with a 400 naming ``tools[0].type``: no computer tool here, and
programmatic tool calling is not served."""


def test_every_stream_event_of_the_sdk_is_emitted_or_said_why_not(in_process_app: InProcess) -> None:
    """Ours: each event class's ``type``, and the hosted calls' progress events, which the kinds the
    server serves name (``HostedToolEvent.type`` is any of them); none is a name the SDK lacks."""
    sdk = union_types(typing.get_args(response_stream_event.ResponseStreamEvent)[0])
    ours = {
        kind for member in typing.get_args(StreamEvent) for kind in _literals(member.model_fields["type"].annotation)
    }
    tools: ToolRegistry = in_process_app.http.app.state.services.tools  # type: ignore[attr-defined]
    hosted = tools.hosted_events()
    assert hosted and hosted <= sdk, hosted - sdk
    assert sdk - ours - hosted == set(NOT_EMITTED)


def test_every_input_item_type_of_the_sdk_is_read_or_refused_by_name(app_http: httpx.Client) -> None:
    sdk = union_types(response_input_item_param.ResponseInputItemParam)
    assert sdk - ITEM_TYPES == REFUSED_ITEMS
    for kind in sorted(REFUSED_ITEMS):
        reply = app_http.post("/v1/responses", json={"model": "sim", "input": [
            {"role": "user", "content": "Hi."}, {"type": kind, "id": "x_1", "call_id": "c_1"}]})  # fmt: skip
        assert reply.status_code == 400, kind
        assert reply.json()["error"]["param"] == "input[1].type", kind


@pytest.mark.parametrize("kind", sorted(union_types(tool_param.ToolParam)))
def test_every_tool_type_of_the_sdk_is_served_or_refused_by_name(app_http: httpx.Client, kind: str) -> None:
    body = {"model": "sim", "input": "Hi.", "tools": [{"type": kind, **TOOL_SAMPLES.get(kind, {})}]}
    reply = app_http.post("/v1/responses", json=body)
    if kind in REFUSED_TOOLS:
        assert reply.status_code == 400 and reply.json()["error"]["param"] == "tools[0].type"
    else:
        assert reply.status_code == 200, reply.text


SUB_SHAPES_REFUSED: set[tuple[str, str, str]] = set()
"""Values of a tool's sub-shapes not served here: a 400 naming the field (none now)."""
SANDBOXED = {("shell", "environment.type", "container_auto"), ("shell", "environment.type", "container_reference")}
"""Values served where a sandbox runs (the hosted shell); without one, a 400 naming the field."""


def sub_shapes() -> list[tuple[str, str, str]]:
    """Each value of the sub-shapes walked, read from the SDK: tool search's ``execution``, a shell's
    ``environment`` types."""
    executions = _literals(typing.get_type_hints(tool_search_tool_param.ToolSearchToolParam)["execution"])
    environments = union_types(function_shell_tool_param.Environment)
    return sorted([("tool_search", "execution", value) for value in executions]
                  + [("shell", "environment.type", value) for value in environments])  # fmt: skip


@pytest.mark.parametrize(("kind", "field", "value"), sub_shapes())
def test_every_sub_shape_value_is_served_or_refused_by_name(app_http: httpx.Client, kind: str, field: str,
                                                            value: str) -> None:  # fmt: skip
    tool: dict[str, Any] = {"type": kind}
    if field == "execution":
        tool["execution"] = value
    else:
        tool["environment"] = {"type": value}
    if value == "container_reference":
        tool["environment"]["container_id"] = app_http.post("/v1/containers", json={"name": "c"}).json()["id"]
    reply = app_http.post("/v1/responses", json={"model": "sim", "input": "Hi.", "tools": [tool]})
    if (kind, field, value) in SUB_SHAPES_REFUSED or ((kind, field, value) in SANDBOXED and probe_sandbox()):
        assert reply.status_code == 400 and reply.json()["error"]["param"] == f"tools[0].{field}"
    else:
        assert reply.status_code == 200, reply.text
    assert SUB_SHAPES_REFUSED <= set(sub_shapes())
