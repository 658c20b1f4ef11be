"""``/v1/organization/usage/{name}`` and ``/v1/organization/costs``: the Admin API's usage and costs
(admin keys only, as every ``/v1/organization`` path), read from the usage ledger."""

from __future__ import annotations

import time

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import BaseRoute, Route

from responsa.engine.usage import REPORTS, UsageQuery
from responsa.protocol import InvalidRequest, NotFound

from ._errors import json_response
from ._parsing import listed
from ._services import services

__all__ = ["usage_routes"]


def _number(request: Request, name: str, default: int | None = None) -> int | None:
    raw = request.query_params.get(name)
    if raw is None:
        return default
    if not raw.lstrip("-").isdigit():
        raise InvalidRequest(f"Invalid '{name}': {raw!r}. Expected an integer.", param=name, code="invalid_value")
    return int(raw)


def _query(request: Request, costs: bool = False) -> UsageQuery:
    start = _number(request, "start_time")
    if start is None:
        raise InvalidRequest("Missing required parameter: 'start_time'.", param="start_time",
                             code="missing_required_parameter")  # fmt: skip
    if listed(request, "user_ids"):
        raise InvalidRequest("There are no users here: usage is by project and key ('user_ids' matches nothing).",
                             param="user_ids", code="unsupported_parameter")  # fmt: skip
    batch = request.query_params.get("batch")
    if batch not in (None, "true", "false"):
        raise InvalidRequest(f"Invalid 'batch': {batch!r}. Expected true or false.", param="batch",
                             code="invalid_value")  # fmt: skip
    return UsageQuery(
        start_time=start,
        end_time=_number(request, "end_time") or int(time.time()) + 1,
        bucket_width=request.query_params.get("bucket_width", "1d"),
        limit=_number(request, "limit"),
        page=request.query_params.get("page"),
        group_by=listed(request, "group_by"),
        project_ids=listed(request, "project_ids"),
        api_key_ids=listed(request, "api_key_ids"),
        models=listed(request, "models"),
        batch=None if batch is None else batch == "true",
        line_items=listed(request, "line_items") if costs else (),
    )


async def usage(request: Request) -> Response:
    name = str(request.path_params["name"])
    if name not in REPORTS:
        raise NotFound(f"No usage report '{name}': there are {', '.join(REPORTS)}.", param="name")
    return json_response(await services(request).usage_reports.usage(name, _query(request)))


async def costs(request: Request) -> Response:
    return json_response(await services(request).usage_reports.costs(_query(request, costs=True)))


def usage_routes() -> list[BaseRoute]:
    return [
        Route("/v1/organization/usage/{name}", usage, methods=["GET"]),
        Route("/v1/organization/costs", costs, methods=["GET"]),
    ]
