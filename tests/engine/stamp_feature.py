"""A request feature from a plug-in (tests/engine/test_feature_plugins.py installs it as pip would): named
by the body's ``stamp`` field, which the server itself does not know, it writes into the response's
metadata the hooks the create reached, in the order it reached them."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from responsa.engine import FeatureRun


class StampFeature:
    name = "stamp"
    fields = frozenset({"stamp"})
    items: frozenset[type] = frozenset()

    def open(self, request: Any, context_types: frozenset[type]) -> FeatureRun | None:
        return _StampRun() if (request.model_extra or {}).get("stamp") else None


class _StampRun(FeatureRun):
    def __init__(self) -> None:
        self.hooks: list[str] = []

    def _reached(self, hook: str) -> None:
        if not self.hooks or self.hooks[-1] != hook:  # a hook reached again in a row counts once
            self.hooks.append(hook)

    def waits(self) -> tuple[int, float] | None:
        self._reached("waits")
        return None

    def revise(self, request: Any) -> Any:
        self._reached("revise")
        return request

    async def plan(self, store: Any, request: Any, context: Sequence[Any]) -> Any:
        self._reached("plan")
        return request

    def read(self, context: list[Any]) -> list[Any]:
        self._reached("read")
        return context

    def begin(self, response: Any) -> None:
        self._reached("begin")

    async def screen_input(self, items: Sequence[Any]) -> bool:
        self._reached("screen_input")
        return False

    async def answer(self, backend: Any, context: list[Any], build: Callable[[list[Any]], Any]) -> Any:
        self._reached("answer")
        return None

    async def fit(self, backend: Any, context: list[Any], count: Any) -> Any:
        self._reached("fit")
        return None

    def shape(self, model: Any, input_items: Sequence[Any]) -> None:
        self._reached("shape")

    def item_opened(self, item: Any) -> None:
        self._reached("item_opened")

    def item_done(self, item: Any) -> None:
        self._reached("item_done")

    def hold(self, turns: Any, finished: Callable[[], bool]) -> Any:
        self._reached("hold")
        return turns

    async def screen_output(self, response: Any) -> bool:
        self._reached("screen_output")
        response.metadata = {**(response.metadata or {}), "hooks": " ".join(self.hooks)}
        return False


FEATURE = StampFeature()
