"""Tool definitions and ``tool_choice`` in all its forms."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import Discriminator, Field, Tag, field_validator

from ._base import WireModel, WirePart

__all__ = [
    "AllowedTools",
    "FunctionTool",
    "HostedToolChoice",
    "McpTool",
    "NamedFunctionChoice",
    "Tool",
    "ToolChoice",
    "ToolRef",
    "UnknownTool",
]


class FunctionTool(WireModel):
    """A function the client runs; the model fills ``parameters`` (a JSON schema).

    Echoed with every field present (``null`` where unset), as the specification requires."""

    type: Literal["function"] = "function"
    name: str = Field(min_length=1, max_length=128)
    description: str | None = None
    parameters: dict[str, Any] | None = None
    strict: bool = False
    """Whether arguments must match ``parameters`` exactly; false when not asked for, since it is
    then not enforced (upstreams receive it as sent)."""

    @field_validator("strict", mode="before")
    @classmethod
    def _unset_strict(cls, value: Any) -> Any:
        return False if value is None else value


class McpTool(WirePart):
    """A remote MCP server whose tools the server lists and calls itself."""

    type: Literal["mcp"] = "mcp"
    server_label: str = Field(min_length=1, max_length=64, pattern=r"^[A-Za-z0-9_.-]+$")
    server_url: str | None = None
    server_description: str | None = None
    headers: dict[str, str] | None = None
    """Sent with every request to the server (credentials); never echoed back or stored."""
    allowed_tools: list[str] | dict[str, Any] | None = None
    """Tool names, or ``{"tool_names": [...]}``."""
    require_approval: Literal["always", "never"] | dict[str, Any] | None = None
    """``always``, ``never`` (the default here), or ``{"always": {"tool_names": [...]}, "never": {...}}``."""

    def allowed_names(self) -> set[str] | None:
        """The tool names the model may use, or None for all of them."""
        if self.allowed_tools is None:
            return None
        if isinstance(self.allowed_tools, list):
            return set(self.allowed_tools)
        names = self.allowed_tools.get("tool_names")
        return set(names) if isinstance(names, list) else None

    def needs_approval(self, tool_name: str) -> bool:
        policy = self.require_approval
        if policy is None or policy == "never":
            return False
        if policy == "always":
            return True
        for decision, needs in (("always", True), ("never", False)):
            names = (policy.get(decision) or {}).get("tool_names")
            if isinstance(names, list) and tool_name in names:
                return needs
        return True


class UnknownTool(WirePart):
    """A tool of another type (mcp, web_search, vendor tools): kept as sent."""

    type: str


def _tool_tag(value: Any) -> str:
    kind = value.get("type") if isinstance(value, dict) else getattr(value, "type", None)
    return kind if kind in ("function", "mcp") else "other"


Tool = Annotated[
    Annotated[FunctionTool, Tag("function")] | Annotated[McpTool, Tag("mcp")] | Annotated[UnknownTool, Tag("other")],
    Discriminator(_tool_tag),
]


class NamedFunctionChoice(WirePart):
    """Force a call to this function."""

    type: Literal["function"]
    name: str


class ToolRef(WirePart):
    """A tool named inside ``allowed_tools``: a function by name, an MCP server (and tool), or a hosted tool."""

    type: str
    name: str | None = None
    server_label: str | None = None


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
