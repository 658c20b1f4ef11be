"""The call items of tools the client runs besides plain functions, and their outputs.

Agent clients (Codex, the Agents SDK) send ``custom`` tools (free-form input), ``shell`` and
``local_shell`` (commands), ``apply_patch`` (file operations) and client-side ``tool_search``;
the model's calls come back as these items and the client's results come in as their outputs.
Shapes follow ``openai.types.responses``.
"""

from __future__ import annotations

from collections.abc import Collection
from typing import Any, ClassVar, Literal, Self

from pydantic import Field

from ._base import WirePart
from ._parts import ContentPart

__all__ = [
    "OPTIONAL_DATA_ITEMS",
    "ApplyPatchCall",
    "ApplyPatchCallOutput",
    "CodeInterpreterCall",
    "CodeOutput",
    "CustomToolCall",
    "CustomToolCallOutput",
    "ImageGenerationCall",
    "LocalShellAction",
    "LocalShellCall",
    "LocalShellCallOutput",
    "ShellAction",
    "ShellCall",
    "ShellCallOutput",
    "ShellOutput",
    "ToolSearchCall",
    "ToolSearchOutput",
    "WebSearchAction",
    "WebSearchCall",
    "WebSearchResult",
    "WebSearchSource",
]

CallStatus = Literal["in_progress", "completed", "incomplete"]


class CustomToolCall(WirePart):
    """The model calls a ``custom`` tool with free-form text ``input``."""

    type: Literal["custom_tool_call"] = "custom_tool_call"
    id: str | None = None
    call_id: str
    name: str
    input: str
    namespace: str | None = None
    """The ``namespace`` tool the custom tool belongs to, if any."""
    status: CallStatus | None = None


class CustomToolCallOutput(WirePart):
    """The client's result for a ``custom_tool_call``, matched by ``call_id``."""

    type: Literal["custom_tool_call_output"] = "custom_tool_call_output"
    id: str | None = None
    call_id: str
    output: str | list[ContentPart]
    status: CallStatus | None = None


class ShellAction(WirePart):
    """Commands for the ``shell`` tool, run in order."""

    commands: list[str]
    timeout_ms: int | None = None
    max_output_length: int | None = None


class ShellCall(WirePart):
    """The model's shell commands: for the client (``environment`` ``{"type": "local"}``) or run by the
    server in a container (``{"type": "container_reference", "container_id": ...}``)."""

    type: Literal["shell_call"] = "shell_call"
    id: str | None = None
    call_id: str
    action: ShellAction
    status: CallStatus | None = None
    environment: dict[str, Any] | None = None


class ShellOutput(WirePart):
    """What one command printed and how it ended (``{"type": "exit", "exit_code": n}`` or ``timeout``)."""

    stdout: str = ""
    stderr: str = ""
    outcome: dict[str, Any] | None = None


class ShellCallOutput(WirePart):
    """The client's result for a ``shell_call``: one entry per command."""

    type: Literal["shell_call_output"] = "shell_call_output"
    id: str | None = None
    call_id: str
    output: list[ShellOutput]
    max_output_length: int | None = None
    status: CallStatus | None = None


class LocalShellAction(WirePart):
    """One command (argv) for the ``local_shell`` tool."""

    type: Literal["exec"] = "exec"
    command: list[str]
    env: dict[str, str] = Field(default_factory=dict)
    timeout_ms: int | None = None
    user: str | None = None
    working_directory: str | None = None


class LocalShellCall(WirePart):
    """The model asks the client to run a command on its machine."""

    type: Literal["local_shell_call"] = "local_shell_call"
    id: str | None = None
    call_id: str
    action: LocalShellAction
    status: CallStatus | None = None


class LocalShellCallOutput(WirePart):
    """The client's result for a ``local_shell_call``; ``id`` is the call's ``call_id``."""

    type: Literal["local_shell_call_output"] = "local_shell_call_output"
    id: str
    output: str
    status: CallStatus | None = None


class ApplyPatchCall(WirePart):
    """The model asks the client to create, update or delete a file:
    ``operation`` is ``{"type": "create_file" | "update_file" | "delete_file", "path", "diff"?}``."""

    type: Literal["apply_patch_call"] = "apply_patch_call"
    id: str | None = None
    call_id: str
    operation: dict[str, Any]
    status: CallStatus | None = None


class ApplyPatchCallOutput(WirePart):
    """The client's result for an ``apply_patch_call``."""

    type: Literal["apply_patch_call_output"] = "apply_patch_call_output"
    id: str | None = None
    call_id: str
    status: Literal["completed", "failed"] = "completed"
    output: str | None = None


class ToolSearchCall(WirePart):
    """The model searches the client's deferred tools (``tool_search`` with ``execution: client``)."""

    type: Literal["tool_search_call"] = "tool_search_call"
    id: str | None = None
    call_id: str | None = None
    arguments: Any = None
    execution: Literal["server", "client"] = "client"
    status: CallStatus | None = None


class ToolSearchOutput(WirePart):
    """The tools a ``tool_search_call`` found; offered to the model from then on."""

    type: Literal["tool_search_output"] = "tool_search_output"
    id: str | None = None
    call_id: str | None = None
    execution: Literal["server", "client"] = "client"
    tools: list[dict[str, Any]] = Field(default_factory=list)
    status: CallStatus | None = None


class FileSearchResult(WirePart):
    """One passage a file search found (``include: ["file_search_call.results"]``)."""

    file_id: str | None = None
    filename: str | None = None
    score: float | None = None
    text: str | None = None
    attributes: dict[str, Any] | None = None


class FileSearchCall(WirePart):
    """A file search: run by the server over the request's vector stores (or made up by the simulator).
    Its ``results`` are stored always and shown where ``include`` asks for them."""

    type: Literal["file_search_call"] = "file_search_call"
    id: str | None = None
    status: Literal["in_progress", "searching", "completed", "incomplete", "failed"] = "completed"
    queries: list[str] = Field(default_factory=list)
    results: list[FileSearchResult] | None = None

    INCLUDES: ClassVar[frozenset[str]] = frozenset({"file_search_call.results"})
    """The ``include`` values that show this item's optional data."""

    def shown(self, include: Collection[str]) -> Self:
        """This call with only the optional data ``include`` asks for."""
        hide = self.results is not None and "file_search_call.results" not in include
        return self.model_copy(update={"results": None}) if hide else self


class WebSearchSource(WirePart):
    """A page a web search consulted (``include: ["web_search_call.action.sources"]``)."""

    type: Literal["url", "api"] = "url"
    url: str | None = None
    name: str | None = None


class WebSearchAction(WirePart):
    """What a web search call did: ``search`` (its query), ``open_page`` or ``find_in_page``."""

    type: str = "search"
    query: str | None = None
    queries: list[str] | None = None
    sources: list[WebSearchSource] | None = None
    url: str | None = None
    pattern: str | None = None


class WebSearchResult(WirePart):
    """A page as the model read it (``include: ["web_search_call.results"]``): ``number`` is how the
    model cites it (``[1]``)."""

    number: int
    url: str
    title: str | None = None
    text: str = ""


class WebSearchCall(WirePart):
    """A web search: run by the server through its search provider (or made up by the simulator). The
    pages it read are stored always and shown where ``include`` asks for them."""

    type: Literal["web_search_call"] = "web_search_call"
    id: str | None = None
    status: Literal["in_progress", "searching", "completed", "failed"] = "completed"
    action: WebSearchAction = Field(default_factory=WebSearchAction)
    results: list[WebSearchResult] | None = None

    INCLUDES: ClassVar[frozenset[str]] = frozenset({"web_search_call.action.sources", "web_search_call.results"})
    """The ``include`` values that show this item's optional data."""

    def shown(self, include: Collection[str]) -> Self:
        """This call with only the optional data ``include`` asks for."""
        update: dict[str, object] = {}
        if self.results is not None and "web_search_call.results" not in include:
            update["results"] = None
        if self.action.sources is not None and "web_search_call.action.sources" not in include:
            update["action"] = self.action.model_copy(update={"sources": None})
        return self.model_copy(update=update) if update else self


class ImageGenerationCall(WirePart):
    """An image drawn by the images model the tool names (or made up by the simulator): ``result`` is it,
    base64."""

    type: Literal["image_generation_call"] = "image_generation_call"
    id: str | None = None
    status: Literal["in_progress", "generating", "completed", "failed"] = "completed"
    result: str | None = None
    revised_prompt: str | None = None
    background: str | None = None
    output_format: str | None = None
    quality: str | None = None
    size: str | None = None
    error: dict[str, Any] | None = None


class CodeOutput(WirePart):
    """What a cell printed (``logs``) or drew (``image``, its ``url`` a ``data:image/png`` URL)."""

    type: Literal["logs", "image"]
    logs: str | None = None
    url: str | None = None


class CodeInterpreterCall(WirePart):
    """Python the model wrote, run by the server in a container (or made up by the simulator). Its
    ``outputs`` are stored always and shown where ``include`` asks for them."""

    type: Literal["code_interpreter_call"] = "code_interpreter_call"
    id: str | None = None
    status: Literal["in_progress", "interpreting", "completed", "incomplete", "failed"] = "completed"
    code: str | None = None
    container_id: str = ""
    outputs: list[CodeOutput] | None = None

    INCLUDES: ClassVar[frozenset[str]] = frozenset({"code_interpreter_call.outputs"})
    """The ``include`` values that show this item's optional data."""

    def shown(self, include: Collection[str]) -> Self:
        """This call with only the optional data ``include`` asks for."""
        hide = self.outputs is not None and "code_interpreter_call.outputs" not in include
        return self.model_copy(update={"outputs": None}) if hide else self


OPTIONAL_DATA_ITEMS = (FileSearchCall, WebSearchCall, CodeInterpreterCall)
"""The items whose optional data is stored always and shown per ``include`` (each says which values
show it, ``INCLUDES``, and how it is shown, ``shown``)."""
