"""``GET /v1/server``: what this process serves and how it is doing, for the console's server page (an
extension). The figures are the ones ``/metrics`` exports, read from the same counters."""

from __future__ import annotations

import os
from dataclasses import asdict

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import BaseRoute, Route

from responsa import __version__

from ._errors import json_response
from ._services import services

__all__ = ["server_routes"]


async def server_status(request: Request) -> Response:
    state = services(request)
    return json_response(
        {
            "object": "server",
            "version": __version__,
            "started_at": state.started_at,
            "process": {"id": os.getpid(), "workers": state.processes},
            "models": state.models,
            "prompts": state.responses.prompts(),
            "workers": [asdict(worker) for worker in state.workers()],
            "hosted_tools": state.tools.statuses(),
            "capabilities": {capability.name: capability.as_json() for capability in state.capabilities},
            **state.metrics.totals(),
        }
    )


def server_routes(prefix: str) -> list[BaseRoute]:
    return [Route(f"{prefix}/server", server_status, methods=["GET"])]
