"""Tool definitions and ``tool_choice`` in all its forms."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import Discriminator, Field, Tag

from ._base import WirePart

__all__ = [
    "AllowedTools",
    "FunctionTool",
    "HostedToolChoice",
    "NamedFunctionChoice",
    "Tool",
    "ToolChoice",
    "ToolRef",
    "UnknownTool",
]


class FunctionTool(WirePart):
    """A function the client runs; the model fills ``parameters`` (a JSON schema)."""

    type: Literal["function"] = "function"
    name: str = Field(min_length=1, max_length=128)
    description: str | None = None
    parameters: dict[str, Any] | None = None
    strict: bool | None = None


class UnknownTool(WirePart):
    """A tool of another type (mcp, web_search, vendor tools): kept as sent."""

    type: str


def _tool_tag(value: Any) -> str:
    kind = value.get("type") if isinstance(value, dict) else getattr(value, "type", None)
    return "function" if kind == "function" else "other"


Tool = Annotated[
    Annotated[FunctionTool, Tag("function")] | Annotated[UnknownTool, Tag("other")],
    Discriminator(_tool_tag),
]


class NamedFunctionChoice(WirePart):
    """Force a call to this function."""

    type: Literal["function"]
    name: str


class ToolRef(WirePart):
    """A tool named inside ``allowed_tools``: a function by name, or a hosted tool by type."""

    type: str
    name: str | None = None


class AllowedTools(WirePart):
    """Restrict the model to these tools; ``mode`` says whether it must call one."""

    type: Literal["allowed_tools"]
    mode: Literal["auto", "required"] = "auto"
    tools: list[ToolRef]


class HostedToolChoice(WirePart):
    """Force a hosted tool by type (``{"type": "web_search"}``, ``{"type": "mcp", ...}``)."""

    type: str
    server_label: str | None = None
    name: str | None = None


def _choice_tag(value: Any) -> str:
    if isinstance(value, str):
        return "mode"
    kind = value.get("type") if isinstance(value, dict) else getattr(value, "type", None)
    if kind in ("function", "allowed_tools"):
        return str(kind)
    return "hosted"


ToolChoice = Annotated[
    Annotated[Literal["auto", "none", "required"], Tag("mode")]
    | Annotated[NamedFunctionChoice, Tag("function")]
    | Annotated[AllowedTools, Tag("allowed_tools")]
    | Annotated[HostedToolChoice, Tag("hosted")],
    Discriminator(_choice_tag),
]
