"""Shared base for wire models: unknown fields are kept so they round-trip, never rejected."""

from __future__ import annotations

import copy
from collections.abc import Callable
from functools import partial
from typing import Any, Self, TypeVar, cast, get_args

from pydantic import BaseModel, ConfigDict, Tag
from pydantic_core import PydanticUndefined

__all__ = ["WireModel", "WirePart", "dump_dict", "dump_json", "member_tags", "new_model", "union_tags", "unvalidated"]

_new = object.__new__
# Each of a model's own attributes set through its slot's descriptor: ``object.__setattr__`` looks the
# descriptor up on every call (90 ns against 55 here; a token's event sets four).
_set_dict = BaseModel.__dict__["__dict__"].__set__
_set_fields_set = BaseModel.__dict__["__pydantic_fields_set__"].__set__
_set_extra = BaseModel.__dict__["__pydantic_extra__"].__set__
_set_private = BaseModel.__dict__["__pydantic_private__"].__set__


_M = TypeVar("_M", bound=BaseModel)


def new_model(
    cls: type[_M], fields: dict[str, Any], given: set[str], extra: dict[str, Any] | None, private: Any = None
) -> _M:
    """A model of ``cls`` holding exactly these fields (in declaration order, as a validated one holds
    them), as ``model_construct`` makes one, in half the time a validated one takes: a stream makes
    an event a token. Nothing is validated, so the caller vouches that each field is of its type.
    ``given``: the fields a validated one would count as set."""
    model = _new(cls)
    _set_dict(model, fields)
    _set_fields_set(model, given)
    _set_extra(model, extra)
    _set_private(model, private)
    return model


class _Fields:
    """A model's fields as :func:`unvalidated` fills them in: those with a plain default (or none), in
    the declaration's order; those made by a factory; those that must be given."""

    def __init__(self, cls: type[BaseModel]) -> None:
        fields = cls.__pydantic_fields__
        self.plain = {name: None if field.default_factory else field.get_default() for name, field in fields.items()}
        self.made = [(name, cast(Callable[[], Any], field.default_factory))
                     for name, field in fields.items() if field.default_factory]  # fmt: skip
        # A mutable default is copied for each model, as validation copies it, never shared.
        self.made += [(name, partial(copy.deepcopy, default)) for name, default in self.plain.items()
                      if isinstance(default, (list, dict, set, BaseModel))]  # fmt: skip
        self.required = frozenset(name for name, field in fields.items() if field.is_required())


_fields: dict[type[BaseModel], _Fields] = {}


def unvalidated(cls: type[_M], given: dict[str, Any]) -> _M:
    """``cls(**given)`` without validation (see :func:`new_model`), the fields not given at their
    defaults. For the models the engine builds on every request from values already validated (a
    request's, a model's counts, its own ids): validating them again cost 1-4 µs each. The caller
    vouches that each value is what validation would leave it as; the model's validators do not run.
    ``given`` is a dict, not keywords: packing thirty keywords cost a microsecond more."""
    fields = _fields.get(cls)
    if fields is None:
        fields = _fields[cls] = _Fields(cls)
    if not fields.required.issubset(given):
        raise TypeError(f"{cls.__name__} needs {sorted(fields.required.difference(given))}")
    values = fields.plain | given  # in the declaration's order, as validation leaves them
    for name, factory in fields.made:
        if name not in given:
            values[name] = factory()
    return new_model(cls, values, set(given), {})


def dump_dict(model: BaseModel) -> dict[str, Any]:
    """``model.model_dump(mode="json")``, straight from its serializer: pydantic's Python wrapper around
    it cost 1.3 µs a call, about as much as dumping a small part itself (a response is dumped for the
    store, its items for their rows)."""
    dumped: dict[str, Any] = model.__pydantic_serializer__.to_python(model, mode="json")
    return dumped


def dump_json(model: BaseModel) -> bytes:
    """``model.model_dump_json()``, as bytes, straight from its serializer: the wrapper and the round
    trip through ``str`` cost 2 µs an event (see :func:`dump_dict`)."""
    return model.__pydantic_serializer__.to_json(model)


class WireModel(BaseModel):
    """A JSON object of the API; extra (vendor or future) fields are accepted and preserved."""

    model_config = ConfigDict(extra="allow", populate_by_name=True)

    def __copy__(self) -> Self:
        """A shallow copy, as pydantic's (which ``model_copy`` calls) makes it, without the generic
        ``copy.copy`` of each of its attributes: 4 µs a copy, and a stream copies its items and its
        response for their events several times."""
        extra = self.__pydantic_extra__
        private = getattr(self, "__pydantic_private__", None)
        if private is not None:
            private = {key: value for key, value in private.items() if value is not PydanticUndefined}
        return new_model(
            type(self),
            self.__dict__.copy(),
            self.__pydantic_fields_set__.copy(),
            None if extra is None else extra.copy(),
            private,
        )


def is_none(value: Any) -> bool:
    """A field's ``exclude_if``: an optional field left unset is absent from the JSON, not null."""
    return value is None


class WirePart(WireModel):
    """An item or content part: absent optional fields are omitted rather than sent as null.

    Each field of a subclass is marked to be left out when None, so that pydantic's own serializer
    drops it (a serializer in Python, wrapped around each item and part, cost twice the dump)."""

    @classmethod
    def __pydantic_init_subclass__(cls, **kwargs: Any) -> None:
        super().__pydantic_init_subclass__(**kwargs)
        fields = [field for field in cls.model_fields.values() if field.exclude_if is None]
        if fields:
            for field in fields:
                field.exclude_if = is_none
            cls.model_rebuild(force=True)


def member_tags(union: Any) -> frozenset[str]:
    """The ``Tag`` of each member of a discriminated union (``Annotated[A | B, Discriminator]``, each
    member ``Annotated[A, Tag("a")]``): the one list of what the union knows, read from it."""
    members = get_args(get_args(union)[0])
    return frozenset(meta.tag for member in members for meta in get_args(member)[1:] if isinstance(meta, Tag))


def union_tags(model: type[BaseModel]) -> frozenset[str]:
    """Every tag of the tagged unions inside ``model`` (item, part, tool, choice and format types):
    pydantic puts the tag of the member it tried in an error's location, where a client's field path
    has none."""
    tags: set[str] = set()
    pending: list[Any] = [model.__pydantic_core_schema__]
    while pending:
        schema = pending.pop()
        if isinstance(schema, dict):
            if schema.get("type") == "tagged-union":
                tags.update(tag for tag in schema["choices"] if isinstance(tag, str))
            pending.extend(schema.values())
        elif isinstance(schema, list):
            pending.extend(schema)
    return frozenset(tags)
