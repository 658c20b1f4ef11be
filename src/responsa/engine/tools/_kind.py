"""What a tool kind the client runs is: the seam every such kind plugs into.

Models (and Chat Completions upstreams) only know functions with JSON arguments, so each kind says
how its tools are offered as functions, what item a call opens and which events its arguments
stream as, how the item is filled when the call is complete, and how its call and output items
are read back into the next model request as a function call and its result.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from responsa.protocol import (
    CustomTool,
    FunctionCall,
    FunctionCallOutput,
    FunctionTool,
    InvalidRequest,
    Item,
    StreamEvent,
    Tool,
)

__all__ = ["ClientRoute", "ClientToolKind", "ClientTools", "OpenCall", "Where"]

SEPARATOR = "__"
"""Between a namespace and a tool's name in the name the model sees."""

Where = dict[str, Any]
"""``item_id`` and ``output_index`` of the call item, for its events."""


@dataclass(frozen=True)
class ClientRoute:
    """Where a model-visible tool name leads: the kind that makes its item, the client's name and namespace."""

    kind: str
    name: str
    namespace: str | None = None
    custom: CustomTool | None = None


@dataclass
class ClientTools:
    """The client's tools as the model sees them, and the way back from the model's names."""

    tools: list[FunctionTool] = field(default_factory=list)
    routes: dict[str, ClientRoute] = field(default_factory=dict)

    def model_name(self, name: str, namespace: str | None) -> str:
        return f"{namespace}{SEPARATOR}{name}" if namespace else name

    def add(self, tool: FunctionTool, route: ClientRoute, param: str) -> None:
        if tool.name in self.routes:
            raise InvalidRequest(f"Duplicate tool name '{tool.name}'.", param=f"{param}.name")
        self.routes[tool.name] = route
        self.tools.append(tool)

    def grammars(self) -> dict[str, tuple[str, str]]:
        """The custom tools whose input has a grammar: ``(syntax, definition)`` by model-visible name."""
        found: dict[str, tuple[str, str]] = {}
        for name, route in self.routes.items():
            fmt = route.custom.format if route.custom is not None else None
            if fmt is not None and fmt.type == "grammar" and fmt.syntax and fmt.definition:
                found[name] = (fmt.syntax, fmt.definition)
        return found

    def names_in(self, namespace: str) -> list[str]:
        return [name for name, route in self.routes.items() if route.namespace == namespace]


class OpenCall(Protocol):
    """One call being written by the model."""

    @property
    def item(self) -> Item:
        """The call's output item (filled by :meth:`close`)."""
        ...

    def delta(self, chunk: str, where: Where) -> Sequence[StreamEvent]:
        """The stream events for a piece of the arguments (none for most kinds)."""
        ...

    def close(self, arguments: str, where: Where) -> Sequence[StreamEvent]:
        """Fill the item from the complete arguments; the events that say its arguments are done."""
        ...


class ClientToolKind(Protocol):
    """A kind of tool the client runs (see the module docstring); registered by ``name``."""

    @property
    def name(self) -> str:
        """The routes' kind, and the ``type`` a ``tool_choice`` or ``allowed_tools`` entry names it by."""
        ...

    @property
    def tool_types(self) -> Sequence[str]:
        """The request ``tools[].type`` values it reads."""
        ...

    @property
    def item_types(self) -> Sequence[str]:
        """The item ``type`` values it reads back into the model's context (its calls and outputs)."""
        ...

    def offer(self, tool: Tool, tools: ClientTools, param: str) -> None:
        """Add what the model is offered for ``tool`` (``param`` names it in errors)."""
        ...

    def open_call(self, route: ClientRoute, call_id: str) -> OpenCall:
        """The item a call opens, before its arguments arrive."""
        ...

    def replay(self, item: Item, tools: ClientTools) -> FunctionCall | FunctionCallOutput | None:
        """``item`` as the model reads it (None: as it is)."""
        ...
