"""Tool definitions and ``tool_choice`` in all its forms."""

from __future__ import annotations

from typing import Annotated, Any, ClassVar, Literal

from pydantic import Discriminator, Field, Tag, field_validator, model_validator

from ._base import WireModel, WirePart, member_tags
from ._skills import ContainerSkill

__all__ = [
    "CLIENT_TOOL_TYPES",
    "AllowedTools",
    "CodeInterpreterContainer",
    "CodeInterpreterTool",
    "ContainerAuto",
    "ContainerReference",
    "CustomTool",
    "CustomToolFormat",
    "FunctionTool",
    "HostedToolChoice",
    "LocalShellEnvironment",
    "LocalSkill",
    "McpTool",
    "NamedCustomChoice",
    "NamedFunctionChoice",
    "NamespaceTool",
    "ShellEnvironment",
    "ShellTool",
    "Tool",
    "ToolChoice",
    "ToolRef",
    "ToolSearchTool",
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

    @model_validator(mode="before")
    @classmethod
    def _flatten(cls, value: Any) -> Any:
        return _flat_function(value)

    @field_validator("strict", mode="before")
    @classmethod
    def _unset_strict(cls, value: Any) -> Any:
        return False if value is None else value


def _flat_function(value: Any) -> Any:
    """Chat Completions' ``{"type": "function", "function": {...}}`` (what OpenVINO's and older
    clients send) as the flat Responses form, which is what is echoed."""
    if isinstance(value, dict) and isinstance(value.get("function"), dict) and "name" in value["function"]:
        flat = {key: item for key, item in value.items() if key != "function"}
        return {**value["function"], **flat}
    return value


class CustomToolFormat(WirePart):
    """How a custom tool's input is written: free ``text``, or a ``grammar`` (``lark`` or ``regex``)."""

    type: Literal["text", "grammar"] = "text"
    syntax: Literal["lark", "regex"] | None = None
    definition: str | None = None


class CustomTool(WirePart):
    """A tool the client runs whose input is free-form text (a patch, a query), not JSON arguments."""

    type: Literal["custom"] = "custom"
    name: str = Field(min_length=1, max_length=128)
    description: str | None = None
    format: CustomToolFormat | None = None


class NamespaceTool(WirePart):
    """A named group of function and custom tools; calls name the namespace they came from."""

    type: Literal["namespace"] = "namespace"
    name: str = Field(min_length=1, max_length=128)
    description: str | None = None
    tools: list[Annotated[FunctionTool | CustomTool, Field(discriminator="type")]]


class ToolSearchTool(WirePart):
    """Search over tools held back from the model; ``execution: client`` means the client runs it."""

    type: Literal["tool_search"] = "tool_search"
    execution: Literal["server", "client"] = "server"
    description: str | None = None
    parameters: dict[str, Any] | None = None


CLIENT_TOOL_TYPES = frozenset({"shell", "local_shell", "apply_patch"})
"""Tool types with a fixed shape that the client runs: offered to the model, returned as their own items."""


class McpTool(WirePart):
    """A remote MCP server whose tools the server lists and calls itself."""

    SECRET_FIELDS: ClassVar[tuple[str, ...]] = ("headers", "authorization")
    """Credentials: used, never echoed back or stored."""

    type: Literal["mcp"] = "mcp"
    server_label: str = Field(min_length=1, max_length=64, pattern=r"^[A-Za-z0-9_.-]+$")
    server_url: str | None = None
    server_description: str | None = None
    headers: dict[str, str] | None = None
    """Sent with every request to the server (credentials); never echoed back or stored."""
    authorization: str | None = None
    """An OAuth access token for the server, sent as ``Authorization: Bearer``; never echoed back or stored."""
    connector_id: str | None = None
    """OpenAI's service connectors (Gmail, Google Drive...): not run here (a 400)."""
    tunnel_id: str | None = None
    """OpenAI's Secure MCP Tunnel: not run here (a 400)."""
    allowed_callers: list[str] | None = None
    """``direct`` (the model calls the tools); ``programmatic`` calls are not made here (a 400 without ``direct``)."""
    defer_loading: bool | None = None
    """Its tools wait for the request's server-run tool search to load them (offered at once without one)."""
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


class FileSearchTool(WirePart):
    """Search vector stores: the server searches the tenant's stores it names; without stores, the
    backend's own search (the simulator's), or none."""

    type: Literal["file_search"] = "file_search"
    vector_store_ids: list[str] | None = None
    max_num_results: int | None = Field(default=None, ge=1, le=50)
    filters: dict[str, Any] | None = None
    """An attribute filter (comparison or compound), checked when the request arrives."""
    ranking_options: dict[str, Any] | None = None


WEB_SEARCH_TYPES = ("web_search", "web_search_2025_08_26", "web_search_preview", "web_search_preview_2025_03_11")


class WebSearchFilters(WirePart):
    allowed_domains: list[str] | None = None
    """Hosts (and their subdomains) results may come from, without the scheme: ``openai.com``."""


class WebSearchTool(WirePart):
    """Search the web: run by the server through its search provider (``--web-search``)."""

    type: Literal["web_search", "web_search_2025_08_26", "web_search_preview", "web_search_preview_2025_03_11"]
    filters: WebSearchFilters | None = None
    user_location: dict[str, Any] | None = None
    search_context_size: Literal["low", "medium", "high"] | None = None
    external_web_access: bool | None = None
    search_content_types: list[str] | None = None


class ImageGenerationTool(WirePart):
    """Draw images: run by the server with the images model ``model`` names, on an upstream serving it."""

    type: Literal["image_generation"] = "image_generation"
    model: str | None = None
    action: Literal["generate", "edit", "auto"] | None = None
    size: str | None = None
    quality: str | None = None
    background: str | None = None
    output_format: str | None = None
    output_compression: int | None = Field(default=None, ge=0, le=100)
    moderation: str | None = None
    partial_images: int | None = Field(default=None, ge=0, le=3)
    input_fidelity: str | None = None
    input_image_mask: dict[str, Any] | None = None


class CodeInterpreterContainer(WirePart):
    """A new container for the request (or the one an earlier call in the context used)."""

    type: Literal["auto"] = "auto"
    file_ids: list[str] | None = Field(default=None, max_length=100)
    memory_limit: Literal["1g", "4g", "16g", "64g"] | None = None
    network_policy: dict[str, Any] | None = None


class CodeInterpreterTool(WirePart):
    """Run Python: run by the server in a sandboxed container (``container``: ``auto`` or an id)."""

    type: Literal["code_interpreter"] = "code_interpreter"
    container: str | CodeInterpreterContainer = Field(default_factory=CodeInterpreterContainer)
    """Required by OpenAI; ``auto`` here when left out."""


class LocalSkill(WirePart):
    name: str
    description: str
    path: str


class LocalShellEnvironment(WirePart):
    """The client's own machine runs the shell's commands; ``skills`` are folders there the model is told of."""

    type: Literal["local"] = "local"
    skills: list[LocalSkill] | None = None


class ContainerAuto(WirePart):
    """A container made for the request (or the one an earlier hosted shell call in the context used)."""

    type: Literal["container_auto"] = "container_auto"
    file_ids: list[str] | None = Field(default=None, max_length=100)
    memory_limit: Literal["1g", "4g", "16g", "64g"] | None = None
    network_policy: dict[str, Any] | None = None
    skills: list[ContainerSkill] | None = Field(default=None, max_length=50)


class ContainerReference(WirePart):
    """A running container of the tenant's (``/v1/containers``)."""

    type: Literal["container_reference"] = "container_reference"
    container_id: str


ShellEnvironment = Annotated[LocalShellEnvironment | ContainerAuto | ContainerReference, Field(discriminator="type")]


class ShellTool(WirePart):
    """Shell commands: run by the client (``environment`` ``local`` or none), or by the server in a
    container (OpenAI's hosted shell: ``container_auto``, ``container_reference``)."""

    type: Literal["shell"] = "shell"
    environment: ShellEnvironment | None = None

    @property
    def hosted(self) -> bool:
        return self.environment is not None and self.environment.type != "local"


class UnknownTool(WirePart):
    """A tool of another type (mcp, web_search, vendor tools): kept as sent."""

    type: str


def _tool_tag(value: Any) -> str:
    kind = value.get("type") if isinstance(value, dict) else getattr(value, "type", None)
    if kind in WEB_SEARCH_TYPES:
        return "web_search"
    return kind if isinstance(kind, str) and kind in _TOOL_TAGS else "other"


Tool = Annotated[
    Annotated[FunctionTool, Tag("function")]
    | Annotated[McpTool, Tag("mcp")]
    | Annotated[CustomTool, Tag("custom")]
    | Annotated[NamespaceTool, Tag("namespace")]
    | Annotated[ToolSearchTool, Tag("tool_search")]
    | Annotated[FileSearchTool, Tag("file_search")]
    | Annotated[WebSearchTool, Tag("web_search")]
    | Annotated[ImageGenerationTool, Tag("image_generation")]
    | Annotated[CodeInterpreterTool, Tag("code_interpreter")]
    | Annotated[ShellTool, Tag("shell")]
    | Annotated[UnknownTool, Tag("other")],
    Discriminator(_tool_tag),
]

_TOOL_TAGS = member_tags(Tool) - {"other"}
"""The tool types the union knows (``web_search`` standing for its every spelling); any other is kept as sent."""


class NamedFunctionChoice(WirePart):
    """Force a call to this function (of ``namespace``, when it belongs to one)."""

    type: Literal["function"]
    name: str
    namespace: str | None = None

    @model_validator(mode="before")
    @classmethod
    def _flatten(cls, value: Any) -> Any:
        return _flat_function(value)


class NamedCustomChoice(WirePart):
    """Force a call to this custom tool."""

    type: Literal["custom"]
    name: str
    namespace: str | None = None


class ToolRef(WirePart):
    """A tool named inside ``allowed_tools``: a function or custom tool by name (and namespace), a
    whole namespace, an MCP server (and tool), or a tool type (``shell``, ``web_search``)."""

    type: str
    name: str | None = None
    namespace: str | None = None
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
    if kind in ("function", "custom", "allowed_tools"):
        return str(kind)
    return "hosted"


ToolChoice = Annotated[
    Annotated[Literal["auto", "none", "required"], Tag("mode")]
    | Annotated[NamedFunctionChoice, Tag("function")]
    | Annotated[NamedCustomChoice, Tag("custom")]
    | Annotated[AllowedTools, Tag("allowed_tools")]
    | Annotated[HostedToolChoice, Tag("hosted")],
    Discriminator(_choice_tag),
]
