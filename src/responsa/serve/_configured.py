"""What the settings make, one factory each: the backends, the retention, the rate limiter, the
webhook sender, the embedder, and how usage is reported. Shared by the app's assembly and
``responsa doctor``."""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Mapping
from contextlib import aclosing
from functools import partial

from responsa.backends import Backend, BackendRegistry, Embeds
from responsa.backends.chat_completions import ChatCompletionsBackend, Strategy, UpstreamModel, discover_models
from responsa.backends.remote import remote_backends
from responsa.backends.simulator import SimulatorBackend, load_profiles
from responsa.config import Settings
from responsa.engine import Embedder, ResponseService
from responsa.engine.projects import LimitTable
from responsa.engine.tools.multi_agent import SPEAKER
from responsa.engine.usage import UsageHook, UsageLedger
from responsa.external import UrlPolicy, WebhookSender
from responsa.http import Limiter, Metrics, RateLimiter
from responsa.protocol import CreateResponseRequest, ResponseObject, StreamEvent
from responsa.store import Retention, SqlStore

from ._model_process import embedded_backends
from ._shared_limits import SharedRateLimiter
from ._workers import WorkerGroup

__all__ = [
    "configured_backends",
    "configured_limiter",
    "embedder",
    "retention",
    "run_subagent",
    "sweep",
    "sweep_interval",
    "usage_reporter",
    "webhook_sender",
]

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


def retention(settings: Settings) -> Retention:
    return Retention(
        response_ttl=settings.responses_store_ttl_secs,
        response_max_entries=settings.responses_store_max_entries,
        conversation_ttl=settings.conversation_store_ttl_secs,
        conversation_max_entries=settings.conversation_store_max_entries,
        conversations_on_first_use=settings.conversations_on_first_use,
    )


def sweep_interval(retention: Retention) -> float:
    """A quarter of the shortest TTL, at most a minute."""
    ttls = [ttl for ttl in (retention.response_ttl, retention.conversation_ttl) if ttl]
    return min(max(min(ttls, default=60) / 4, 0.1), 60)


async def sweep(store: SqlStore) -> None:
    removed = await store.sweep()
    if removed:
        logger.info("retention sweep removed %d objects", removed)


def embedder(settings: Settings, registry: BackendRegistry) -> Embedder | None:
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


def configured_limiter(settings: Settings, table: LimitTable, group: WorkerGroup | None = None) -> Limiter:
    """Redis's buckets where it is configured, else the workers' shared file, else this process's;
    each holding the limits ``table`` says."""
    if settings.redis_url is None and group is not None:
        return SharedRateLimiter(table, group.limits_file)
    if settings.redis_url is None:
        return RateLimiter(table)
    from ._redis_limits import RedisRateLimiter  # redis-py is loaded only when asked for

    return RedisRateLimiter(table, settings.redis_url, settings.redis_fail_open)


async def run_subagent(
    limiter: Limiter, responses: ResponseService, tenant: str, request: CreateResponseRequest
) -> AsyncIterator[list[StreamEvent]]:
    """A hosted subagent's turn (``engine.Rooms.runner``): admitted by the tenant's rate limits and its
    backend's line like any request's generation, then run to its end as the tenant's response."""
    await limiter.admit(tenant)
    service = responses.for_tenant(tenant)
    run = await service.start(request)
    async with aclosing(service.events(run)) as events:
        async for batch in events:
            yield batch


def webhook_sender(settings: Settings) -> WebhookSender:
    """Deliveries reach public addresses, the hosts allowed by name, and loopback while the server has no
    API keys (one trusted user); never link-local or cloud-metadata addresses."""
    policy = UrlPolicy(settings.webhook_allow_hosts, allow_loopback=not settings.api_keys, public=True,
                       subject="webhook url", code="webhook_url_not_allowed")  # fmt: skip
    return WebhookSender(policy, settings.webhook_timeout_secs)


def usage_reporter(limiter: Limiter, metrics: Metrics, ledger: UsageLedger) -> UsageHook:
    """Each response's end: its tokens spent from the tenant's limits and counted in the metrics, and
    its use in the usage ledger."""

    async def report(tenant: str, response: ResponseObject, metered: Mapping[str, int], latency_ms: int) -> None:
        if SPEAKER.get() is not None:  # a hosted subagent's: the response it works for counts it
            return
        usage = response.usage
        if usage is not None:
            await limiter.spend(tenant, usage.total_tokens)
            await limiter.spend(tenant, usage.total_tokens, response.model)
            metrics.count_usage(usage.input_tokens, usage.output_tokens)
        ledger.record_response(tenant, response, metered, latency_ms)

    return report
