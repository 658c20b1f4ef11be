"""Request features: what a create may ask beyond the model's turn, each one module that plugs into
the create at fixed points instead of a branch threaded through the opening, the response and the
model request.

A feature (:class:`RequestFeature`) is registered once, at start (``ResponseSetup.features``). For each
create it is asked whether the request names it (:meth:`RequestFeature.open`); only those that answer
with a :class:`FeatureRun` take part, so a plain create runs none. A run's hooks, in the order the
create reaches them: ``revise`` (the request as sent: before it is checked, the feature may rewrite
it), ``plan`` (the context known: read the store, work out what the response will say), ``begin``
(the response object made: fill the fields the feature owns), ``screen_input`` (before the model
reads the input: may keep it from the model), ``shape`` (each model request built: set what the
feature decides of it), ``hold`` (the run's events as a stream sends them: may hold them back),
``screen_output`` (the model done: may withhold its output).
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Sequence
from typing import Protocol

from responsa.backends import ModelRequest
from responsa.protocol import CreateResponseRequest, Item, ResponseObject, StreamEvent
from responsa.store import Store

__all__ = ["FeatureRun", "RequestFeature", "held", "input_blocked", "open_features", "output_withheld", "revised"]

Turns = AsyncIterator[list[StreamEvent]]
"""A run's events, in the batches a stream sends together."""


class FeatureRun:
    """One request's use of a feature; every hook does nothing unless the feature's run overrides it."""

    def revise(self, request: CreateResponseRequest) -> CreateResponseRequest:
        """The request as the rest of the create sees it (checked after every feature revised it)."""
        return request

    async def plan(self, store: Store, request: CreateResponseRequest, context: Sequence[Item]) -> None:
        """The request's context is known (history, input, configuration updates applied); ``store``
        is the request's tenant's."""

    def begin(self, response: ResponseObject) -> None:
        """The response object is made: set the fields this feature fills."""

    async def screen_input(self, items: Sequence[Item]) -> bool:
        """The request's input (``items``), before the model reads it: True where the model must not
        (the response then ends ``incomplete``, ``content_filter``, with no output)."""
        return False

    def shape(self, model: ModelRequest, input_items: Sequence[Item]) -> None:
        """A model request was built for a turn (``input_items``: the request's input): set on it what
        this feature decides."""

    def hold(self, turns: Turns, finished: Callable[[], bool]) -> Turns:
        """The run's events as a stream reads them; ``finished`` says whether the response has ended."""
        return turns

    async def screen_output(self, response: ResponseObject) -> bool:
        """The model is done (``response.output`` is what it said): True where the output is withheld
        (the response ends as for a blocked input)."""
        return False


class RequestFeature(Protocol):
    """A feature a create may name."""

    name: str

    def open(self, request: CreateResponseRequest) -> FeatureRun | None:
        """This request's run of the feature, or None where the request does not name it."""


def open_features(features: Sequence[RequestFeature], request: CreateResponseRequest) -> tuple[FeatureRun, ...]:
    """The runs of the features ``request`` names (most creates: none)."""
    return tuple(run for feature in features if (run := feature.open(request)) is not None)


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
