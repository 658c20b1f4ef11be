"""The request features' registry: only the features a request or its context names are opened, each
once, and their runs take their hooks in the order the features were registered."""

from __future__ import annotations

from responsa.engine import FeatureRun
from responsa.engine.responses.features._features import Features
from responsa.protocol import Compaction, ConfigurationUpdate, CreateResponseRequest, Message, Reasoning


class _Named:
    """A feature named by a request field (``metadata`` holding its name) or by an item type."""

    fields = frozenset({"metadata"})

    def __init__(self, name: str, items: frozenset[type] = frozenset()) -> None:
        self.name = name
        self.items = items
        self.asked: list[frozenset[type]] = []

    def open(self, request: CreateResponseRequest, context_types: frozenset[type]) -> FeatureRun | None:
        self.asked.append(context_types)
        named = self.name in (request.metadata or {}) or not self.items.isdisjoint(context_types)
        return _Run(self.name) if named else None


class _Run(FeatureRun):
    def __init__(self, name: str) -> None:
        self.name = name


def _request(*names: str) -> CreateResponseRequest:
    return CreateResponseRequest(model="m", input="hi", metadata=dict.fromkeys(names, "1"))


def test_a_plain_create_asks_no_feature_and_a_plain_context_none_again() -> None:
    first, second = _Named("first"), _Named("second", frozenset({Compaction}))
    features = Features([first, second])
    plain = CreateResponseRequest(model="m", input="hi")
    runs = features.open(plain)
    assert runs == ()
    assert features.open_in_context(plain, frozenset({Message, Reasoning}), runs) == ()
    assert first.asked == [] and second.asked == []  # it sets none of their fields: not asked
    assert features.open(_request()) == ()  # one that sets their field asks them, each once
    assert first.asked == [frozenset()] and second.asked == [frozenset()]


def test_the_context_opens_its_features_in_registration_order_and_none_twice() -> None:
    seal = _Named("seal", frozenset({Reasoning}))
    configuration = _Named("configuration", frozenset({ConfigurationUpdate}))
    cache = _Named("cache")
    features = Features([configuration, cache, seal])
    request = _request("cache", "seal")
    runs = features.open(request)
    assert [run.name for run in runs] == ["cache", "seal"]  # type: ignore[attr-defined]
    context = frozenset({Message, Reasoning, ConfigurationUpdate})
    opened = features.open_in_context(request, context, runs)
    assert [run.name for run in opened] == ["configuration", "cache", "seal"]  # type: ignore[attr-defined]
    assert opened[1] is runs[0] and opened[2] is runs[1]  # the request's runs kept, not opened again
    assert seal.asked == [frozenset()] and cache.asked == [frozenset()]
    assert configuration.asked == [frozenset(), context]
