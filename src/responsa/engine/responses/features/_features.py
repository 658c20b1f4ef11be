"""Request features: what a create may ask beyond the model's turn, each one module that plugs into
the create at fixed points instead of a branch threaded through the opening, the response and the
model request.

A feature (:class:`RequestFeature`) is registered once, at start (``ResponseSetup.features``). For each
create it is asked whether the request names it (:meth:`RequestFeature.open`); only those that answer
with a :class:`FeatureRun` take part, so a plain create runs none. A run's hooks, in the order the
create reaches them: ``revise`` (the request as sent: before it is checked, the feature may rewrite
it), ``plan`` (the context known: read the store, work out what the response will say), ``begin``
(the response object made: fill the fields the feature owns), ``shape`` (each model request built:
set what the feature decides of it).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from responsa.backends import ModelRequest
from responsa.protocol import CreateResponseRequest, Item, ResponseObject
from responsa.store import Store

__all__ = ["FeatureRun", "RequestFeature", "open_features", "revised"]


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

    def shape(self, model: ModelRequest, input_items: Sequence[Item]) -> None:
        """A model request was built for a turn (``input_items``: the request's input): set on it what
        this feature decides."""


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
