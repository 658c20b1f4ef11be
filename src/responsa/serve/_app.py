"""The ASGI application: ``http``'s routes and middleware, and a lifespan that puts the server
together by the builders of ``_assembly`` (the only place where concrete backends and stores are
chosen)."""

from __future__ import annotations

import os
from collections.abc import AsyncIterator, Sequence
from contextlib import AsyncExitStack, asynccontextmanager

from starlette.applications import Starlette

from responsa.backends import Backend
from responsa.config import Settings
from responsa.engine.projects import KeyDirectory, LimitTable
from responsa.http import EXCEPTION_HANDLERS, FORM_SLACK, ExactRoutes, Gate, HttpLimits, Metrics, routes

from ._assembly import BUILDERS, Assembly
from ._configured import configured_limiter
from ._workers import WorkerGroup

__all__ = ["create_app"]


def create_app(settings: Settings, group: WorkerGroup | None = None, backends: Sequence[Backend] = ()) -> Starlette:
    """A ready app; the store is migrated and backends opened in its lifespan. ``group``: the workers
    this app is one of (``responsa serve --workers``), sharing limits and metrics. ``backends``: served
    first, beside those the settings make (an application embedding responsa in its own process, a
    test's scripted model); a process of ``--workers`` makes its app from the settings alone."""
    limits = HttpLimits(
        settings.max_body_bytes,
        settings.websocket_max_age_secs,
        {"truncation": "auto"} if settings.default_truncation == "auto" else None,
        settings.codex_responses_lite,
    )
    table = LimitTable(settings.api_keys)
    limiter = configured_limiter(settings, table, group)
    keys = KeyDirectory(settings.api_keys, settings.admin_key, table)
    metrics = Metrics(shared=None if group is None else group.metrics_directory)

    @asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        async with AsyncExitStack() as stack:
            made = Assembly(app, settings, group, stack, limiter, metrics, limits, keys, tuple(backends))
            for build in BUILDERS:
                await build(made)
            yield

    served = routes()
    app = Starlette(routes=served, exception_handlers=EXCEPTION_HANDLERS, lifespan=lifespan)
    app.add_middleware(ExactRoutes, routes=served, handlers=EXCEPTION_HANDLERS)  # below the gate: added first
    app.add_middleware(
        Gate,
        keys=keys,
        limiter=limiter,
        metrics=metrics,
        max_body_bytes=settings.max_body_bytes,
        max_upload_bytes=settings.max_file_bytes + FORM_SLACK,
        served_by=None if group is None else str(os.getpid()),
    )
    return app
