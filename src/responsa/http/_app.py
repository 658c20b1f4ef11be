"""The ASGI application. The only place where concrete backends and stores are chosen."""

from __future__ import annotations

import hmac
import logging
from collections.abc import AsyncIterator
from contextlib import AsyncExitStack, asynccontextmanager

import anyio
from starlette.applications import Starlette
from starlette.types import ASGIApp, Receive, Scope, Send

from responsa.backends import Backend, BackendRegistry
from responsa.backends.chat_completions import ChatCompletionsBackend, Strategy, UpstreamModel, discover_models
from responsa.backends.llama_cpp import LlamaCppBackend
from responsa.backends.simulator import SimulatorBackend
from responsa.config import Settings
from responsa.engine import ConversationService, ResponseService
from responsa.protocol import AuthenticationFailed
from responsa.store import Retention, SqlStore
from responsa.tools import McpConnector, UrlPolicy

from ._errors import EXCEPTION_HANDLERS, error_response
from ._routes import routes

__all__ = ["create_app"]

logger = logging.getLogger(__name__)

_OPEN_PATHS = frozenset({"/health"})


async def _backends(settings: Settings) -> list[Backend]:
    """Upstream models first (explicit configuration wins a name clash), then embedded, then simulated."""
    backends: list[Backend] = []
    upstream = [
        UpstreamModel(model.name, model.urls, model.upstream_model, model.api_key, _strategy(model.strategy))
        for model in settings.models
    ]
    if settings.upstreams:
        upstream += await discover_models(settings.upstreams)
    if upstream:
        backends.append(ChatCompletionsBackend(upstream, health_interval=settings.upstream_health_interval_secs))
    if settings.embedded:
        backends.append(LlamaCppBackend(settings.gguf))
    if settings.simulator:
        backends.append(SimulatorBackend(token_delay=settings.sim_token_delay_ms / 1000))
    return backends


def _strategy(name: str) -> Strategy:
    return "round_robin" if name == "round_robin" else "least_busy"


def _retention(settings: Settings) -> Retention:
    return Retention(
        response_ttl=settings.responses_store_ttl_secs,
        response_max_entries=settings.responses_store_max_entries,
        conversation_ttl=settings.conversation_store_ttl_secs,
        conversation_max_entries=settings.conversation_store_max_entries,
    )


async def _sweep_forever(store: SqlStore) -> None:
    """Remove expired objects: every quarter of the shortest TTL, at most once a minute."""
    ttls = [ttl for ttl in (store.retention.response_ttl, store.retention.conversation_ttl) if ttl]
    interval = min(max(min(ttls, default=60) / 4, 0.1), 60)
    while True:
        try:
            removed = await store.sweep()
        except Exception:
            logger.exception("retention sweep failed")
        else:
            if removed:
                logger.info("retention sweep removed %d objects", removed)
        await anyio.sleep(interval)


class ApiKeyMiddleware:
    """``Authorization: Bearer <key>`` must name a configured key (when any are configured)."""

    def __init__(self, app: ASGIApp, keys: tuple[str, ...]) -> None:
        self.app = app
        self.keys = [key.encode() for key in keys]

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or not self.keys or scope["path"] in _OPEN_PATHS:
            await self.app(scope, receive, send)
            return
        header = dict(scope["headers"]).get(b"authorization", b"")
        token = header[7:].strip() if header[:7].lower() == b"bearer " else b""
        if not any(hmac.compare_digest(token, key) for key in self.keys):
            failure = AuthenticationFailed(
                "Incorrect API key provided. Pass a configured key as 'Authorization: Bearer <key>'."
                if token
                else "You didn't provide an API key. Use 'Authorization: Bearer <key>'."
            )
            await error_response(failure)(scope, receive, send)
            return
        await self.app(scope, receive, send)


def create_app(settings: Settings) -> Starlette:
    """A ready app; the store is migrated and backends opened in its lifespan."""

    @asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        async with AsyncExitStack() as stack:
            registry = BackendRegistry(await _backends(settings))
            stack.push_async_callback(registry.aclose)
            store = SqlStore(settings.db_url, _retention(settings))
            stack.push_async_callback(store.aclose)
            await store.migrate()
            tasks = await stack.enter_async_context(anyio.create_task_group())
            connector = McpConnector(settings.mcp_call_timeout_secs, settings.mcp_list_timeout_secs)
            policy = UrlPolicy(settings.mcp_allow_hosts)
            app.state.service = ResponseService(
                store,
                registry,
                background=tasks,
                mcp=connector,
                url_policy=policy,
                lease=settings.background_lease_secs,
            )
            app.state.conversations = ConversationService(store)
            app.state.models = registry.models()
            recovered = await app.state.service.recover()
            if recovered:
                logger.warning("%d background responses were cut off by a restart; marked failed", recovered)
            if store.retention.expires:
                tasks.start_soon(_sweep_forever, store)
            tasks.start_soon(registry.monitor)
            tasks.start_soon(app.state.service.watch_orphans)
            tasks.start_soon(app.state.service.watch_cancels)
            yield
            await app.state.service.drain(settings.shutdown_grace_secs)
            tasks.cancel_scope.cancel()

    app = Starlette(routes=routes(), exception_handlers=EXCEPTION_HANDLERS, lifespan=lifespan)
    app.add_middleware(ApiKeyMiddleware, keys=settings.api_keys)
    return app
