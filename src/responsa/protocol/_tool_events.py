"""Stream events of the calls the server runs (MCP, the hosted tools, the code interpreter, the hosted
shell, image generation): their progress, their input as it streams, their output."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field

from ._base import is_none
from ._event_base import Event as _Event
from ._event_base import PieceDelta as _PieceDelta

__all__ = [
    "CodeInterpreterCodeDelta",
    "CodeInterpreterCodeDone",
    "HostedToolEvent",
    "ImagePartialEvent",
    "McpCallArgumentsDelta",
    "McpCallArgumentsDone",
    "McpItemEvent",
    "ShellCommandEvent",
    "ShellOutputDelta",
    "ShellOutputDone",
]


class McpItemEvent(_Event):
    """Progress of an MCP listing or call item (no payload beyond the item's position)."""

    type: Literal[
        "response.mcp_list_tools.in_progress",
        "response.mcp_list_tools.completed",
        "response.mcp_list_tools.failed",
        "response.mcp_call.in_progress",
        "response.mcp_call.completed",
        "response.mcp_call.failed",
    ]
    item_id: str
    output_index: int


class McpCallArgumentsDelta(_PieceDelta):
    type: Literal["response.mcp_call_arguments.delta"] = "response.mcp_call_arguments.delta"


class McpCallArgumentsDone(_Event):
    type: Literal["response.mcp_call_arguments.done"] = "response.mcp_call_arguments.done"
    item_id: str
    output_index: int
    arguments: str


class HostedToolEvent(_Event):
    """Progress of a built-in tool call item (web search, file search, code interpreter, image generation)."""

    type: str
    """``response.<item type>.<phase>``: the names are the hosted kinds' (each says its ``progress`` phase
    between ``in_progress`` and ``completed``; ``ToolRegistry.hosted_events`` lists them)."""
    item_id: str
    output_index: int


class CodeInterpreterCodeDelta(_PieceDelta):
    type: Literal["response.code_interpreter_call_code.delta"] = "response.code_interpreter_call_code.delta"


class CodeInterpreterCodeDone(_Event):
    type: Literal["response.code_interpreter_call_code.done"] = "response.code_interpreter_call_code.done"
    item_id: str
    output_index: int
    code: str


class ShellCommandEvent(_Event):
    """A command of a hosted ``shell_call`` as it is written: ``added``, ``delta`` (a piece), ``done``
    (the whole command). OpenAI's events name the item by ``output_index`` only."""

    type: Literal["response.shell_call_command.added", "response.shell_call_command.delta",
                  "response.shell_call_command.done"]  # fmt: skip
    output_index: int
    command_index: int
    command: str | None = Field(default=None, exclude_if=is_none)
    delta: str | None = Field(default=None, exclude_if=is_none)


class ShellOutputDelta(_Event):
    """What a hosted shell's command printed (``delta``: ``stdout`` and ``stderr``), on its
    ``shell_call_output`` item."""

    type: Literal["response.shell_call_output_content.delta"] = "response.shell_call_output_content.delta"
    item_id: str
    output_index: int
    command_index: int
    delta: dict[str, str]


class ShellOutputDone(_Event):
    """A hosted shell's command ended: its output (``stdout``, ``stderr``, ``outcome``)."""

    type: Literal["response.shell_call_output_content.done"] = "response.shell_call_output_content.done"
    item_id: str
    output_index: int
    command_index: int
    output: list[dict[str, Any]]


class ImagePartialEvent(_Event):
    """A partial image of an ``image_generation_call`` while it is drawn (``partial_images`` asks for them)."""

    type: Literal["response.image_generation_call.partial_image"] = "response.image_generation_call.partial_image"
    item_id: str
    output_index: int
    partial_image_b64: str
    partial_image_index: int
    size: str | None = None
    quality: str | None = None
    background: str | None = None
    output_format: str | None = None
