"""What the handlers reach, as one typed object the app's lifespan makes (``app.state.services``), and
the tenant's view of each service for a request."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from starlette.requests import HTTPConnection

from responsa.backends import ServedModel, WorkerState
from responsa.engine import (
    BatchService,
    Compactor,
    ContainerService,
    ConversationService,
    EmbeddingService,
    FileService,
    ImagesApi,
    ResponseService,
    VectorStoreService,
    WebhookService,
)
from responsa.engine.projects import ProjectService
from responsa.engine.skills import SkillService
from responsa.engine.tools import ToolRegistry
from responsa.engine.usage import UsageLedger, UsageReports, Used
from responsa.protocol import Capability
from responsa.store import StoreHealth

from ._limits import Limiter, Permits
from ._metrics import Metrics

__all__ = ["HttpLimits", "Services", "check_model", "count_use", "services", "tenant_of"]


@dataclass(frozen=True)
class HttpLimits:
    """The HTTP layer's own settings, read by handlers."""

    max_body_bytes: int
    websocket_max_age: float
    create_defaults: dict[str, Any] | None = None
    """What a create that leaves a field out gets, where the server's settings differ from the API's default."""
    codex_responses_lite: bool = False
    """Codex's catalog tells it to use Responses Lite (``--codex-responses-lite``)."""


@dataclass(frozen=True)
class Services:
    """The engine's services (each seeing the default tenant: see ``for_tenant``) and the HTTP layer's."""

    responses: ResponseService
    conversations: ConversationService
    files: FileService
    vector_stores: VectorStoreService
    compactor: Compactor
    limiter: Limiter
    permits: Permits
    """What a request that names its model passes: its project's permissions and limits for it."""
    metrics: Metrics
    limits: HttpLimits
    catalog: list[ServedModel]
    """The models served, as the backends describe them (``GET /v1/models``)."""
    workers: Callable[[], list[WorkerState]]
    started_at: int
    tools: ToolRegistry
    """The tool kinds served (``/v1/server`` says whether each hosted one is on, and why not)."""
    capabilities: list[Capability]
    """Every optional capability as probed at start (for ``/v1/server``)."""
    containers: ContainerService
    embeddings: EmbeddingService
    images: ImagesApi
    """``POST /v1/images/generations``, by the images model an upstream serves."""
    batches: BatchService
    webhooks: WebhookService
    skills: SkillService
    """``/v1/skills``, and the skills a hosted shell's container mounts."""
    projects: ProjectService
    """The Admin API's projects, keys and permissions (``/v1/organization/...``)."""
    usage: UsageLedger
    """Where the routes that are not responses count what a request used (embeddings, images...)."""
    usage_reports: UsageReports
    """The Admin API's usage and costs."""
    store_health: Callable[[], Awaitable[StoreHealth]]
    """Whether the store can serve now (``/health``)."""
    processes: int = 1
    """The worker processes serving the port (``--workers``), this one among them."""

    @property
    def models(self) -> list[str]:
        """The names of the models served, in the registry's order (the first is the default)."""
        return [model.name for model in self.catalog]


def services(connection: HTTPConnection) -> Services:
    """The app's services (set by its lifespan)."""
    made: Services = connection.app.state.services
    return made


def tenant_of(connection: HTTPConnection) -> str:
    """The tenant the request's API key acts for (set by the gate)."""
    return str(connection.state.tenant)


async def check_model(connection: HTTPConnection, model: object) -> None:
    """429 where the request's project has spent its limit or its limits for ``model`` are reached,
    403 where it may not use ``model`` (the responses' opener checks its own, hosted tools too)."""
    await services(connection).permits(tenant_of(connection), model if isinstance(model, str) else None)


def count_use(connection: HTTPConnection, used: Used) -> None:
    """Count what a request that is not a response used in the usage ledger (responses count their own)."""
    services(connection).usage.record(tenant_of(connection), used)
