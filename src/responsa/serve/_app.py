"""The ASGI application. The only place where concrete backends and stores are chosen."""

from __future__ import annotations

import logging
import os
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import AsyncExitStack, asynccontextmanager, closing
from functools import partial

import anyio
from starlette.applications import Starlette

from responsa import tracing
from responsa.backends import Backend, BackendRegistry, Embeds
from responsa.backends.chat_completions import ChatCompletionsBackend, Strategy, UpstreamModel, discover_models
from responsa.backends.remote import remote_backends
from responsa.backends.simulator import SimulatorBackend, load_profiles
from responsa.config import Settings
from responsa.engine import (
    BatchRunner,
    BatchService,
    Compactor,
    ConversationService,
    Embedder,
    EmbeddingService,
    FileService,
    PromptLibrary,
    ResponseService,
    Sealer,
    VectorStoreService,
    WebhookDeliverer,
    WebhookService,
    every,
)
from responsa.engine.tools import load_tool_registry
from responsa.engine.tools.code_interpreter import CodeInterpreterKind
from responsa.engine.tools.file_search import FileSearchKind
from responsa.engine.tools.image_generation import ImageGenerationKind
from responsa.engine.tools.mcp import McpKind
from responsa.engine.tools.web_search import WebSearchKind
from responsa.external import UrlPolicy, WebhookSender
from responsa.http import (
    EXCEPTION_HANDLERS,
    FORM_SLACK,
    ExactRoutes,
    Gate,
    HttpLimits,
    Limiter,
    Metrics,
    RateLimiter,
    Services,
    batch_lines,
    routes,
)
from responsa.protocol import Usage
from responsa.store import PART_BYTES, Retention, SqlStore

from ._capabilities import by_name, log_capabilities, probe_capabilities, store_capability
from ._hosted_setup import containers_service, search_provider
from ._model_process import embedded_backends
from ._neighbours import WorkerNeighbours
from ._secret import secret_key
from ._shared_limits import SharedRateLimiter
from ._workers import WorkerGroup

__all__ = ["create_app"]

logger = logging.getLogger(__name__)


async def configured_backends(settings: Settings, group: WorkerGroup | None = None) -> list[Backend]:
    """Upstream models first (explicit configuration wins a name clash), then embedded (in the group's
    model process, where the workers share one), then simulated."""
    backends: list[Backend] = []
    upstream = [
        UpstreamModel(
            model.name,
            model.urls,
            model.upstream_model,
            model.api_key,
            _strategy(model.strategy),
            model.context_window,
            model.vision,
            model.moderation,
        )
        for model in settings.models
    ]
    if settings.upstreams:
        upstream += await discover_models(settings.upstreams)
    if upstream:
        backends.append(
            ChatCompletionsBackend(
                upstream,
                health_interval=settings.upstream_health_interval_secs,
                read_timeout=settings.upstream_timeout_secs,
            )
        )
    if group is not None and group.models_socket is not None:
        backends += await remote_backends(group.models_socket)
    else:
        backends += embedded_backends(settings)
    if settings.simulator:
        profiles = load_profiles(settings.sim_profiles) if settings.sim_profiles else None
        backends.append(
            SimulatorBackend(
                token_delay=settings.sim_token_delay_ms / 1000,
                profiles=profiles,
                latency=settings.sim_latency,
                fault_rate=settings.sim_fault_rate,
                faults=settings.sim_faults,
                timeout_after=settings.sim_timeout_secs,
            )
        )
    return backends


def _strategy(name: str) -> Strategy:
    return "round_robin" if name == "round_robin" else "least_busy"


def _retention(settings: Settings) -> Retention:
    return Retention(
        response_ttl=settings.responses_store_ttl_secs,
        response_max_entries=settings.responses_store_max_entries,
        conversation_ttl=settings.conversation_store_ttl_secs,
        conversation_max_entries=settings.conversation_store_max_entries,
        conversations_on_first_use=settings.conversations_on_first_use,
    )


def _sweep_interval(retention: Retention) -> float:
    """A quarter of the shortest TTL, at most a minute."""
    ttls = [ttl for ttl in (retention.response_ttl, retention.conversation_ttl) if ttl]
    return min(max(min(ttls, default=60) / 4, 0.1), 60)


async def _sweep(store: SqlStore) -> None:
    removed = await store.sweep()
    if removed:
        logger.info("retention sweep removed %d objects", removed)


def _embedder(settings: Settings, registry: BackendRegistry) -> Embedder | None:
    """The configured embedding model's ``embed``; a name no backend serves stops the start."""
    name = settings.embedding_model
    if name is None:
        return None
    if name not in registry.models():
        raise RuntimeError(f"--embedding-model {name!r} is not served here (models: {', '.join(registry.models())})")
    backend = registry.resolve(name)
    if not isinstance(backend, Embeds):
        raise RuntimeError(f"--embedding-model {name!r}: its backend makes no embeddings")
    return partial(backend.embed, name)


def configured_limiter(settings: Settings, group: WorkerGroup | None = None) -> Limiter:
    """Redis's buckets where it is configured, else the workers' shared file, else this process's."""
    if settings.redis_url is None and group is not None:
        return SharedRateLimiter(settings.api_keys, group.limits_file)
    if settings.redis_url is None:
        return RateLimiter(settings.api_keys)
    from ._redis_limits import RedisRateLimiter  # redis-py is loaded only when asked for

    return RedisRateLimiter(settings.api_keys, settings.redis_url, settings.redis_fail_open)


def _webhook_sender(settings: Settings) -> WebhookSender:
    """Deliveries reach public addresses, the hosts allowed by name, and loopback while the server has no
    API keys (one trusted user); never link-local or cloud-metadata addresses."""
    policy = UrlPolicy(settings.webhook_allow_hosts, allow_loopback=not settings.api_keys, public=True,
                       subject="webhook url", code="webhook_url_not_allowed")  # fmt: skip
    return WebhookSender(policy, settings.webhook_timeout_secs)


def _usage_reporter(limiter: Limiter, metrics: Metrics) -> Callable[[str, Usage], Awaitable[None]]:
    async def report(tenant: str, usage: Usage) -> None:
        await limiter.spend(tenant, usage.total_tokens)
        metrics.count_usage(usage.input_tokens, usage.output_tokens)

    return report


def create_app(settings: Settings, group: WorkerGroup | None = None) -> Starlette:
    """A ready app; the store is migrated and backends opened in its lifespan. ``group``: the workers
    this app is one of (``responsa serve --workers``), sharing limits and metrics."""

    @asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        async with AsyncExitStack() as stack:
            if tracing.configured_from_environment():  # before the store opens: its writes are spans
                stack.callback(tracing.shutdown)
            registry = BackendRegistry(await configured_backends(settings, group))
            stack.push_async_callback(registry.aclose)
            store = SqlStore(settings.db_url, _retention(settings))
            stack.push_async_callback(store.aclose)
            stack.push_async_callback(limiter.aclose)
            await store.migrate()
            neighbours = (
                None if group is None else stack.enter_context(closing(WorkerNeighbours(group.neighbours_directory)))
            )
            provider = search_provider(settings)
            capabilities = [
                store_capability(settings.db_url, "schema migrated to the newest revision"),
                *await probe_capabilities(settings, registry, limiter, provider),
            ]
            log_capabilities(capabilities)
            found = by_name(capabilities)
            tasks = await stack.enter_async_context(anyio.create_task_group())
            files = FileService(store.files(), settings.max_file_bytes, PART_BYTES)
            containers, code_status = await containers_service(settings, store, files, found["code_sandbox"])
            stack.push_async_callback(containers.aclose)
            vector_stores = VectorStoreService(store.vector_stores(), files, tasks, _embedder(settings, registry))
            tools = load_tool_registry([
                McpKind.configured(settings),
                FileSearchKind(vector_stores),
                WebSearchKind.configured(settings, provider, found["page_extraction"]),
                ImageGenerationKind(registry),
                CodeInterpreterKind(containers, code_status),
            ])  # fmt: skip
            sealer = Sealer(secret_key(settings) if group is None else group.secret)
            compactor = Compactor(store, registry, sealer, tools)
            responses = ResponseService(
                store,
                registry,
                tools,
                background=tasks,
                lease=settings.background_lease_secs,
                on_usage=_usage_reporter(limiter, metrics),
                max_input_items=settings.max_input_items,
                admission=(settings.max_generations, settings.max_queued_generations, settings.max_queue_wait_secs),
                hosted_tools=settings.hosted_tools,
                compactor=compactor,
                prompts=PromptLibrary(settings.prompts_dir),
                cancel_poll=settings.cancel_poll_secs,
            )
            metrics.workers = registry.workers
            metrics.held = responses.generations
            embeddings = EmbeddingService(registry)
            lines = batch_lines(responses, embeddings, limiter, settings.max_body_bytes)
            batches = store.batches()
            runner = BatchRunner(batches, files, lines, registry.models, settings.batch_concurrency,
                                 settings.background_lease_secs, busy=partial(responses.interactive, 1.0))  # fmt: skip
            sender = _webhook_sender(settings)
            outbox = store.webhooks()
            webhooks = WebhookService(outbox, sender)
            if settings.webhook_url is not None:
                if not settings.webhook_secret:
                    raise RuntimeError(
                        "--webhook-url needs --webhook-secret (a whsec_... secret that signs deliveries)"
                    )
                await webhooks.put_static(settings.webhook_url, settings.webhook_secret)
            app.state.services = Services(
                responses=responses,
                conversations=ConversationService(store, tools),
                files=files,
                vector_stores=vector_stores,
                compactor=compactor,
                limiter=limiter,
                metrics=metrics,
                limits=limits,
                catalog=registry.described(),
                workers=registry.workers,
                started_at=int(time.time()),
                hosted_tools=tools.statuses(),
                capabilities=capabilities,
                containers=containers,
                embeddings=embeddings,
                batches=BatchService(batches, files, lines, runner.wake),
                webhooks=webhooks,
                store_health=store.check_health,
                processes=1 if group is None else group.size,
            )
            await vector_stores.recover()
            leases = responses.leases
            await leases.recover()
            # Always: files expire by their own expires_after, whatever the retention settings.
            sweep = partial(_sweep, store)
            tasks.start_soon(every, _sweep_interval(store.retention), sweep, "the retention sweep")
            tasks.start_soon(every, 30.0, containers.expire_idle, "the containers' expiry")
            tasks.start_soon(registry.monitor)
            tasks.start_soon(leases.watch_orphans)
            tasks.start_soon(leases.renew_forever)
            tasks.start_soon(responses.watch_cancels, neighbours)
            tasks.start_soon(runner.serve)
            tasks.start_soon(WebhookDeliverer(outbox, sender).serve)
            if group is not None:
                tasks.start_soon(every, 1.0, metrics.publish, "publishing this worker's metrics")
            yield
            await responses.drain(settings.shutdown_grace_secs)
            await metrics.publish()  # what this worker counted to its end stays in the sums
            tasks.cancel_scope.cancel()

    limits = HttpLimits(
        settings.max_body_bytes,
        settings.websocket_max_age_secs,
        {"truncation": "auto"} if settings.default_truncation == "auto" else None,
    )
    limiter = configured_limiter(settings, group)
    metrics = Metrics(shared=None if group is None else group.metrics_directory)
    table = routes()
    app = Starlette(routes=table, exception_handlers=EXCEPTION_HANDLERS, lifespan=lifespan)
    app.add_middleware(ExactRoutes, routes=table, handlers=EXCEPTION_HANDLERS)  # below the gate: added first
    app.add_middleware(
        Gate,
        keys=settings.api_keys,
        limiter=limiter,
        metrics=metrics,
        max_body_bytes=settings.max_body_bytes,
        max_upload_bytes=settings.max_file_bytes + FORM_SLACK,
        served_by=None if group is None else str(os.getpid()),
    )
    return app
