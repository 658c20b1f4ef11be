"""Request features: what a create may ask beyond the model's turn, each one module that plugs into
the create at fixed points instead of a branch threaded through the opening, the response and the
model request.

A feature (:class:`RequestFeature`) is registered once, at start (``ResponseSetup.features``, kept in a
:class:`Features`; plug-ins through the ``responsa.request_features`` entry points,
:func:`load_features`). For each create that sets one of its ``fields`` it is asked whether the request
names it (:meth:`RequestFeature.open`) and, once the context is known, whether the context does (an item
of one of its ``items`` types: a ``configuration_update``, a ``compaction``, reasoning sent back); only
those that answer with a :class:`FeatureRun` take part, so a plain create runs none. A run's hooks, in
the order a plain create reaches them: ``revise`` (the request as sent: before it is checked, the feature
may rewrite it), ``waits`` (whether the run waits apart for its slot), ``plan`` (the context known: read
the store, work out what the response will say, revise the request by what the context says), ``read``
(the tools planned: the context as the model will read it), ``screen_input`` (before the model reads the
input: may keep it from the model), ``answer`` (the model about to be called: may answer in its place),
``fit`` (the context about to be fitted to the model's window: may make it smaller first), ``shape``
(each model request built: set what the feature decides of it), ``begin`` (the response object made: fill
the fields the feature owns; made earlier where something comes before the model), ``hold`` (the run's
events as a stream sends them: may hold them back), ``item_opened`` (each output item as it takes its
place, before its first event), ``item_done`` (each item the model made, as it ends),
``screen_output`` (the model done: may withhold its output), ``ended`` (the run over, however it
ended). A feature whose response waits for the client's answers to its calls while it runs, rather than
ending (hosted multi-agent), has an ``inbox`` they arrive in (``response.inject``).
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import Protocol

from responsa.backends import Backend, ModelRequest, TokenUsage
from responsa.protocol import CreateResponseRequest, Item, ResponseObject, StreamEvent
from responsa.store import Store

from ..._plugins import load_plugins
from ...tools import Recorded
from ...tools.multi_agent import Inbox

__all__ = [
    "ENTRY_POINT_GROUP",
    "Answer",
    "FeatureRun",
    "Features",
    "Fitted",
    "RequestFeature",
    "client_inbox",
    "held",
    "input_blocked",
    "load_features",
    "output_withheld",
    "revised",
]

ENTRY_POINT_GROUP = "responsa.request_features"
"""Where a distribution names its request features (a feature object, or a callable that makes one)."""

Turns = AsyncIterator[list[StreamEvent]]
"""A run's events, in the batches a stream sends together."""


Count = Callable[[list[Item]], Awaitable[int]]
"""Counts a context's tokens as the model would read it (see ``token_counter``)."""


@dataclass
class Answer:
    """What a feature answers in the model's place: the output items it made, and what it spent."""

    items: list[Recorded] = field(default_factory=list)
    usage: TokenUsage | None = None


@dataclass
class Fitted:
    """A context a feature made smaller before it is fitted to the model's window: the context the model
    reads instead, and the output items that say what was done (a ``compaction``)."""

    context: list[Item]
    items: list[Recorded] = field(default_factory=list)


class FeatureRun:
    """One request's use of a feature; every hook does nothing unless the feature's run overrides it."""

    rank = 0
    """The feature's place among those registered: runs take their hooks in that order."""
    inbox: Inbox | None = None
    """Where the client's answers to the calls the response waits on arrive while it runs
    (``response.inject``): a feature whose response waits for them rather than ending has one."""

    def waits(self) -> tuple[int, float] | None:
        """Where the run waits apart for its backend slot instead of taking the line: its rank among such
        work (lower first) and how long it may wait (see ``Admission.later``); None: it takes the line."""
        return None

    def revise(self, request: CreateResponseRequest) -> CreateResponseRequest:
        """The request as the rest of the create sees it (checked after every feature revised it)."""
        return request

    async def plan(
        self, store: Store, request: CreateResponseRequest, context: Sequence[Item]
    ) -> CreateResponseRequest:
        """The request's context is known (history and input, files read); ``store`` is the request's
        tenant's. The request as the rest of the create sees it (revised by what the context says)."""
        return request

    def read(self, context: list[Item]) -> list[Item]:
        """The context as the model will read it (the request's tools planned from it as it was sent)."""
        return context

    def begin(self, response: ResponseObject) -> None:
        """The response object is made: set the fields this feature fills."""

    async def screen_input(self, items: Sequence[Item]) -> bool:
        """The request's input (``items``), before the model reads it: True where the model must not
        (the response then ends ``incomplete``, ``content_filter``, with no output)."""
        return False

    async def answer(
        self, backend: Backend, context: list[Item], build: Callable[[list[Item]], ModelRequest]
    ) -> Answer | None:
        """The model is about to read ``context`` (``build`` makes the model request of a context): an
        answer in its place, or None."""
        return None

    async def fit(self, backend: Backend, context: list[Item], count: Count) -> Fitted | None:
        """The context is about to be fitted to the model's window: a smaller one first, or None."""
        return None

    def shape(self, model: ModelRequest, input_items: Sequence[Item]) -> None:
        """A model request was built for a turn (``input_items``: the request's input): set on it what
        this feature decides."""

    def item_opened(self, item: Item) -> None:
        """An output item takes its place in the output, before its ``output_item.added`` is made: mark
        what the feature owns of it from its first event on (told again of a message made ahead)."""

    def item_done(self, item: Item) -> None:
        """An output item is complete (as ``response.output_item.done`` will show it): fill what the
        feature owns of it."""

    def hold(self, turns: Turns, finished: Callable[[], bool]) -> Turns:
        """The run's events as a stream reads them; ``finished`` says whether the response has ended."""
        return turns

    async def screen_output(self, response: ResponseObject) -> bool:
        """The model is done (``response.output`` is what it said): True where the output is withheld
        (the response ends as for a blocked input)."""
        return False

    def ended(self) -> None:
        """The run is over, however it ended: let go of what the feature holds for it."""


class RequestFeature(Protocol):
    """A feature a create may name."""

    name: str
    fields: frozenset[str]
    """The request fields that may name the feature: it is asked only where the request sets one."""
    items: frozenset[type]
    """The item types that name the feature where the create's context holds one (most: none)."""

    def open(self, request: CreateResponseRequest, context_types: frozenset[type]) -> FeatureRun | None:
        """This request's run of the feature, or None where it is not named: asked as the create arrives
        (``context_types`` empty) and, where the request did not name it, again once the context is known
        and holds one of ``items`` (``context_types``: the item types the context holds)."""


class Features:
    """The request features a server serves, in the order their runs take their hooks."""

    def __init__(self, features: Sequence[RequestFeature]) -> None:
        self.all = tuple(features)
        self._fields = frozenset(name for feature in self.all for name in feature.fields)
        self._items = frozenset(kind for feature in self.all for kind in feature.items)

    def open(self, request: CreateResponseRequest) -> tuple[FeatureRun, ...]:
        """The runs of the features ``request`` names (most creates: none, found with one set test)."""
        named = self._fields.intersection(request.model_fields_set)
        if not named:
            return ()
        return self._opened(request, frozenset(), (), lambda feature: not named.isdisjoint(feature.fields))

    def open_in_context(
        self, request: CreateResponseRequest, context_types: frozenset[type], runs: tuple[FeatureRun, ...]
    ) -> tuple[FeatureRun, ...]:
        """``runs`` with the runs of the features the context names (``context_types``: the item types it
        holds) that the request did not."""
        if context_types.isdisjoint(self._items):  # most contexts: only messages and calls
            return runs
        return self._opened(request, context_types, runs, lambda feature: not context_types.isdisjoint(feature.items))

    def _opened(
        self,
        request: CreateResponseRequest,
        context_types: frozenset[type],
        runs: tuple[FeatureRun, ...],
        asked: Callable[[RequestFeature], bool],
    ) -> tuple[FeatureRun, ...]:
        """``runs`` with those of the features ``asked`` picks that are not open yet and that open, in
        registration order (``rank``)."""
        opened = {run.rank: run for run in runs}
        for rank, feature in enumerate(self.all):
            if rank not in opened and asked(feature) and (run := feature.open(request, context_types)) is not None:
                run.rank = rank
                opened[rank] = run
        return tuple(opened[rank] for rank in sorted(opened)) if len(opened) > len(runs) else runs


def load_features(built_in: Sequence[RequestFeature]) -> tuple[RequestFeature, ...]:
    """The built-in features, then the plug-ins' (the ``responsa.request_features`` entry points), in the
    order their runs take their hooks. A plug-in that cannot be loaded stops the start."""
    features = list(built_in)
    load_plugins(ENTRY_POINT_GROUP, "request feature", lambda loaded: hasattr(loaded, "open"), features.append)
    return tuple(features)


def client_inbox(features: Sequence[FeatureRun]) -> Inbox | None:
    """Where a client's answers arrive while the response runs, if a feature of it takes them."""
    return next((feature.inbox for feature in features if feature.inbox is not None), None)


def revised(features: Sequence[FeatureRun], request: CreateResponseRequest) -> CreateResponseRequest:
    """``request`` as each of the request's features revised it, in their order."""
    for feature in features:
        request = feature.revise(request)
    return request


async def input_blocked(features: Sequence[FeatureRun], items: Sequence[Item]) -> bool:
    """Whether a feature keeps the input from the model (each screens it, so each reports)."""
    blocked = False
    for feature in features:
        blocked = await feature.screen_input(items) or blocked
    return blocked


def held(features: Sequence[FeatureRun], turns: Turns, finished: Callable[[], bool]) -> Turns:
    """A stream's events as each feature lets them through."""
    for feature in features:
        turns = feature.hold(turns, finished)
    return turns


async def output_withheld(features: Sequence[FeatureRun], response: ResponseObject) -> bool:
    """Whether a feature withholds the output (each screens it, so each reports)."""
    withheld = False
    for feature in features:
        withheld = await feature.screen_output(response) or withheld
    return withheld
