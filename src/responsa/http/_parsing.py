"""Reading requests: JSON bodies into wire models, and the paging query parameters."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

import orjson
from pydantic import BaseModel, ValidationError
from starlette.requests import Request

from responsa.protocol import TERMINAL_STATUSES, InvalidRequest, PayloadTooLarge
from responsa.store import ItemPage, Order, ResponseFilter

from ._errors import invalid_from_validation
from ._services import services

__all__ = [
    "Paging",
    "item_list_body",
    "list_body",
    "listed",
    "page_body",
    "paging",
    "read_json",
    "read_model",
    "response_filter",
]

_STATUSES = TERMINAL_STATUSES | {"queued", "in_progress"}


Model = TypeVar("Model", bound=BaseModel)


async def read_model(request: Request, model: type[Model], defaults: dict[str, Any] | None = None) -> Model:
    """The body as ``model`` (over ``defaults``); malformed JSON and invalid fields are 400s naming the field."""
    body = await read_json(request)
    try:
        return model.model_validate({**defaults, **body} if defaults else body)
    except ValidationError as exc:
        raise invalid_from_validation(exc) from None


async def read_json(request: Request) -> dict[str, Any]:
    """The body as a JSON object, within the body limit; anything else is a 400 (413 when too large)."""
    raw = await request.body()
    limit = services(request).limits.max_body_bytes
    if len(raw) > limit:
        raise PayloadTooLarge(f"The request body is larger than {limit} bytes.")
    try:
        body: Any = orjson.loads(raw)
    except orjson.JSONDecodeError:
        raise InvalidRequest(
            "We could not parse the JSON body of your request. The body must be valid JSON.", code="invalid_json"
        ) from None
    if not isinstance(body, dict):
        raise InvalidRequest("The request body must be a JSON object.", code="invalid_json")
    return body


@dataclass(frozen=True)
class Paging:
    limit: int
    order: Order
    after: str | None
    before: str | None


def listed(request: Request, name: str) -> tuple[str, ...]:
    """A list query parameter, as ``name[]=a&name[]=b`` (openai's encoding) or ``name=a&name=b``."""
    return tuple([*request.query_params.getlist(f"{name}[]"), *request.query_params.getlist(name)])


def paging(request: Request, default_limit: int, max_limit: int = 100) -> Paging:
    """``limit`` (1 to ``max_limit``), ``order`` (``asc``/``desc``, default ``desc``), ``after``, ``before``."""
    query = request.query_params
    raw = query.get("limit", str(default_limit))
    limit = int(raw) if raw.isdigit() else 0
    if not 1 <= limit <= max_limit:
        raise InvalidRequest(
            f"Invalid 'limit': {raw!r}. Expected an integer from 1 to {max_limit}.", param="limit", code="invalid_value"
        )
    order = query.get("order", "desc")
    if order not in ("asc", "desc"):
        raise InvalidRequest(
            f"Invalid 'order': {order!r}. Expected 'asc' or 'desc'.", param="order", code="invalid_value"
        )
    return Paging(limit, "asc" if order == "asc" else "desc", query.get("after"), query.get("before"))


def response_filter(request: Request) -> ResponseFilter:
    """The filters of ``GET /v1/responses``: ``model``, ``status``, ``metadata[KEY]``, ``created_after``,
    ``created_before`` (Unix seconds), ``previous_response_id`` and ``conversation``."""
    query = request.query_params
    status = query.get("status")
    if status is not None and status not in _STATUSES:
        raise InvalidRequest(
            f"Invalid 'status': {status!r}. Expected one of {', '.join(sorted(_STATUSES))}.",
            param="status",
            code="invalid_value",
        )
    times: dict[str, int] = {}
    for name in ("created_after", "created_before"):
        raw = query.get(name)
        if raw is not None:
            if not raw.isdigit():
                raise InvalidRequest(
                    f"Invalid {name!r}: {raw!r}. Expected Unix seconds.", param=name, code="invalid_value"
                )
            times[name] = int(raw)
    metadata = {
        key[9:-1]: value for key, value in query.multi_items() if key.startswith("metadata[") and key[-1] == "]"
    }
    return ResponseFilter(
        model=query.get("model"),
        status=status,
        metadata=metadata,
        previous_response_id=query.get("previous_response_id"),
        conversation=query.get("conversation"),
        **times,
    )


def item_list_body(items: Sequence[BaseModel], has_more: bool = False) -> dict[str, Any]:
    """The ``{"object": "list", "data", "first_id", "last_id", "has_more"}`` envelope."""
    return list_body([item.model_dump(mode="json") for item in items], has_more)


def list_body(data: list[dict[str, Any]], has_more: bool = False) -> dict[str, Any]:
    """The list envelope around objects already in their wire form."""
    return {
        "object": "list",
        "data": data,
        "first_id": data[0].get("id") if data else None,
        "last_id": data[-1].get("id") if data else None,
        "has_more": has_more,
    }


def page_body(page: ItemPage) -> dict[str, Any]:
    return item_list_body(page.items, page.has_more)
