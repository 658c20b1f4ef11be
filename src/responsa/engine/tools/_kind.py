"""What a tool kind is: the seam every kind plugs into, whether the client runs its calls (a function,
``shell``) or the server does (an MCP tool, the file search).

Models (and Chat Completions upstreams) only know functions with JSON arguments, so each kind says
how its tools are offered as functions, what item a call opens and which events its arguments
stream as, how the item is filled when the call is complete (and, for a server-run kind, how the
server runs it), how a ``tool_choice`` entry names it, and how its items are read back into the next
model request as function calls and their results.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from itertools import compress
from operator import attrgetter
from typing import TYPE_CHECKING, Any, Literal, Protocol

from responsa.backends import TokenUsage
from responsa.protocol import (
    CreateResponseRequest,
    CustomTool,
    FunctionTool,
    InvalidRequest,
    Item,
    ResponseObject,
    StreamEvent,
    Tool,
    ToolRef,
)

from ..output import Where
from ._annotations import Annotations

if TYPE_CHECKING:
    from ..output import Timeline
    from ._registry import ToolRegistry

__all__ = [
    "Closed",
    "OpenCall",
    "OutputSlots",
    "Recorded",
    "Replay",
    "Route",
    "ServerContext",
    "ServerRun",
    "ServerToolKind",
    "ToolKind",
    "ToolPlan",
    "ToolSetup",
    "Where",
    "chosen_by_name",
]

SEPARATOR = "__"
"""Between a namespace and a tool's name in the name the model sees."""


ItemEnd = Literal["completed", "incomplete"]


@dataclass(frozen=True)
class Route:
    """Where a model-visible tool name leads: the kind that makes its item, the tool's own name and
    namespace, and for a server-run kind what its calls reach (``target``: an MCP server, the searcher)."""

    kind: str
    name: str
    namespace: str | None = None
    custom: CustomTool | None = None
    target: Any = None
    asynchronous: bool = False
    """A function or custom tool declared ``"async": true``: the model goes on without its result."""


@dataclass
class ToolPlan:
    """A request's tools as the model sees them, and the way back from the model's names to their kinds
    (``kinds``: the server's). Under a tool search the server runs (``defers``), tools marked
    ``defer_loading`` wait in ``deferred`` until a search loads them (``loaded``: those an earlier
    search of the context loaded, offered at once)."""

    kinds: ToolRegistry
    tools: list[FunctionTool] = field(default_factory=list)
    routes: dict[str, Route] = field(default_factory=dict)
    defers: bool = False
    loaded: frozenset[str] = frozenset()
    deferred: dict[str, tuple[FunctionTool, Route, dict[str, Any]]] = field(default_factory=dict)
    """Each waiting tool by model-visible name: what the model will see, its route, and its definition
    as a ``tool_search_output`` lists it."""

    def model_name(self, name: str, namespace: str | None) -> str:
        """``<namespace>__<name>``; a function in a namespace of its own name (a deferred top-level
        function, as OpenAI's calls of one name it) is known by its name alone."""
        return f"{namespace}{SEPARATOR}{name}" if namespace and namespace != name else name

    def add(self, tool: FunctionTool, route: Route, param: str, deferred: dict[str, Any] | None = None) -> None:
        """Offer ``tool``; ``deferred`` (its definition), where the request's tool search may hold it back."""
        if tool.name in self.routes or tool.name in self.deferred:
            raise InvalidRequest(f"Duplicate tool name '{tool.name}'.", param=f"{param}.name")
        if deferred is not None and self.defers and tool.name not in self.loaded:
            self.deferred[tool.name] = (tool, route, deferred)
            return
        self.routes[tool.name] = route
        self.tools.append(tool)

    def load(self, names: Sequence[str]) -> list[dict[str, Any]]:
        """Offer the deferred tools ``names`` from now on (a new list: a model request made before keeps
        what it offered); their definitions."""
        loaded = [self.deferred.pop(name) for name in names]
        self.routes.update((tool.name, route) for tool, route, _ in loaded)
        self.tools = [*self.tools, *(tool for tool, _, _ in loaded)]
        return [definition for _, _, definition in loaded]

    def grammars(self) -> dict[str, tuple[str, str]]:
        """The custom tools whose input has a grammar: ``(syntax, definition)`` by model-visible name."""
        found: dict[str, tuple[str, str]] = {}
        for name, route in self.routes.items():
            fmt = route.custom.format if route.custom is not None else None
            if fmt is not None and fmt.type == "grammar" and fmt.syntax and fmt.definition:
                found[name] = (fmt.syntax, fmt.definition)
        return found

    def route(self, name: str) -> Route:
        """Where a model-visible tool name leads; a name the request did not offer is read as a function
        call (the client sees what the model wrote)."""
        return self.routes.get(name) or Route("function", name)

    def names_in(self, namespace: str) -> list[str]:
        return [name for name, route in self.routes.items() if route.namespace == namespace]

    def kind_names(self) -> set[str]:
        """The kinds the model is offered tools of (a hosted type here is run by the server)."""
        return {route.kind for route in self.routes.values()}


class OutputSlots(Protocol):
    """Where a server-run call puts output items of its own (the hosted shell's ``shell_call_output``)."""

    def open(self, item: Item) -> tuple[Where, StreamEvent]:
        """``item`` placed after the output so far: where it is, and its ``output_item.added`` (not yet
        numbered). Until :meth:`close`, a cancel ends it ``incomplete``."""
        ...

    def close(self, item: Item, where: Where) -> StreamEvent:
        """The ``output_item.done`` of ``item`` (a call's own, or one :meth:`open` placed), as it is now."""
        ...


@dataclass
class ServerContext:
    """What a server-run call is run with: the response it belongs to, its run's trace span and
    timeline, what the answer written after the calls will cite, where items of its own go, and where
    what it spent on models is counted."""

    response: ResponseObject
    timeline: Timeline
    annotations: Annotations
    slots: OutputSlots
    span: Any = None
    count: Callable[[TokenUsage], None] = lambda usage: None
    """Adds what a call spent on models itself (a subagent's turns) to the response's usage."""


ServerRun = Callable[[ServerContext, Where], AsyncIterator[Sequence[StreamEvent]]]
"""A call the server runs between model turns: it yields its events (running, its result, its item done)."""


@dataclass(frozen=True)
class Closed:
    """A call the model finished writing: the events that say so, and what happens next."""

    events: Sequence[StreamEvent] = ()
    run: ServerRun | None = None
    """The server runs the call; its item's ``output_item.done`` comes from the run."""
    needs_client: bool = False
    """The client acts on it (runs the call, approves it): the response ends after this turn."""


class OpenCall(Protocol):
    """One call being written by the model."""

    @property
    def item(self) -> Item:
        """The call's output item (filled by :meth:`close`)."""
        ...

    def opened(self, where: Where) -> Sequence[StreamEvent]:
        """The events right after the item is added (a server-run call's ``in_progress``)."""
        ...

    def delta(self, chunk: str, where: Where) -> Sequence[StreamEvent]:
        """The stream events for a piece of the arguments (none for most kinds)."""
        ...

    def close(self, arguments: str, status: ItemEnd, where: Where) -> Closed:
        """Fill the item from the complete arguments (``incomplete``: the turn ran out of tokens)."""
        ...


@dataclass
class Replay:
    """The context being read back for the model, with the request's tools."""

    tools: ToolPlan
    items: Sequence[Item]
    known_calls: Sequence[tuple[int, Item]] = ()
    """The asynchronous calls among the first ``known`` items, with their places, found on an earlier
    turn of the context (see ``Replays``): only the items after them are looked through again."""
    known: int = 0

    @cached_property
    def _by_id(self) -> dict[str, Item]:
        return {item_id: item for item in self.items if (item_id := getattr(item, "id", None))}

    def find(self, item_id: str) -> Item | None:
        """An item of the context by id (an approval's request)."""
        return self._by_id.get(item_id)

    @cached_property
    def asynchronous_places(self) -> list[tuple[int, Item]]:
        """The calls of asynchronous tools in the context (``async: true``) and their places. Found
        among the items with fields of no model (most have none, and are passed over at C speed)."""
        new = self.items[self.known :]
        extra = compress(enumerate(new, self.known), map(_extra_fields, new))
        found = [(place, item) for place, item in extra if (item.model_extra or {}).get("async") is True]
        return [*self.known_calls, *found] if self.known_calls else found

    @cached_property
    def asynchronous_calls(self) -> dict[str, Item]:
        """The calls of asynchronous tools in the context, by ``call_id``."""
        return {getattr(item, "call_id", ""): item for _place, item in self.asynchronous_places}


_extra_fields = attrgetter("__pydantic_extra__")
"""An item's fields of no model (None, or a dict: empty for most)."""


def chosen_by_name(ref: ToolRef, name: str, route: Route) -> bool:
    """A function or custom tool named by an entry of its type (by its own or model-visible name, in
    its namespace when the entry gives one), or by its namespace."""
    if ref.type == "namespace":
        return route.namespace is not None and ref.name == route.namespace
    return ref.type == route.kind and ref.name in (route.name, name) and ref.namespace in (None, route.namespace)


class ToolKind(Protocol):
    """A kind of tool (see the module docstring); registered by ``name``. Optional, where a kind has
    them: ``prepare`` (the server runs its calls: :class:`ServerToolKind`), ``progress`` (a hosted kind:
    a backend may run its calls itself and report them; the phase of their progress event) and
    ``transcribe(item) -> str | None`` (its items' lines in a compaction's transcript), ``answers``
    (the output item classes a request's context may hold only with their call, by ``call_id``) and
    ``metered(items) -> {usage kind: count}`` (what a response's items of the kind count in the usage
    ledger: ``web_search_calls``, ``images``...)."""

    @property
    def name(self) -> str:
        """The routes' kind, and the ``type`` a ``tool_choice`` or ``allowed_tools`` entry names it by."""
        ...

    @property
    def tool_types(self) -> Sequence[str]:
        """The request ``tools[].type`` values it reads."""
        ...

    @property
    def item_types(self) -> Mapping[str, str]:
        """The item ``type`` values it owns (its calls and outputs), each with the prefix of its ids."""
        ...

    def offer(self, tool: Tool, tools: ToolPlan, param: str) -> None:
        """Add what the model is offered for ``tool`` (``param`` names it in errors)."""
        ...

    def open_call(self, route: Route, call_id: str) -> OpenCall:
        """The item a call opens, before its arguments arrive."""
        ...

    def chosen(self, ref: ToolRef, name: str, route: Route) -> bool:
        """Whether a ``tool_choice`` entry (an ``allowed_tools`` one, or a choice by type) names the
        tool the model knows as ``name``."""
        ...

    def replay(self, item: Item, context: Replay) -> Sequence[Item] | None:
        """``item`` as the model reads it (None: as it is; empty: not at all)."""
        ...


@dataclass(frozen=True)
class Recorded:
    """An item a server-run kind made before the model ran (an MCP listing, an approved call)."""

    item: Item
    events: Callable[[Where], Sequence[StreamEvent]]
    """Its events from ``output_item.added`` on (to ``done``, unless ``run`` finishes it)."""
    run: ServerRun | None = None


@dataclass(frozen=True)
class ToolSetup:
    """What a server-run kind plans a request's tools with (its service it holds itself)."""

    request: CreateResponseRequest
    history: Sequence[Item]
    input_items: Sequence[Item]
    tools: ToolPlan
    tenant: str
    """Whose request it is: a kind's service is seen as that tenant sees it (its vector stores, containers)."""
    simulated: bool
    """The model is the simulator, which simulates tools it cannot reach instead of refusing them."""


class ServerToolKind(ToolKind, Protocol):
    """A kind whose calls the server runs, configured at start-up with the service it reaches (the MCP
    connector, the vector stores, the search provider...): it plans before the model runs."""

    async def prepare(self, setup: ToolSetup) -> Sequence[Recorded]:
        """Offer the request's tools of this kind (400 for what cannot be honoured); what it made already."""
        ...
