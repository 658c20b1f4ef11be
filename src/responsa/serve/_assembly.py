"""The server put together at start, by :data:`BUILDERS` in order: each builder makes what it owns
from the settings and what the builders before it made, enters it on the one exit stack (closed in
the reverse order at shutdown) and starts its own tasks (:meth:`Assembly.start`: those asked before
the task group opens start when it does, so what the tasks use is closed only after they end). A new
part of the server is one builder here.
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable, Coroutine
from contextlib import AsyncExitStack, closing
from functools import partial
from typing import Any

import anyio
from anyio.abc import TaskGroup
from starlette.applications import Starlette

from responsa import tracing
from responsa.backends import Backend, BackendRegistry
from responsa.config import Settings
from responsa.engine import (
    BackgroundWindowsFeature,
    BatchRunner,
    BatchService,
    CompactionFeature,
    Compactor,
    ConfigurationFeature,
    ContainerService,
    ConversationService,
    EmbeddingService,
    FileService,
    ImagesApi,
    ModerationFeature,
    MultiAgentFeature,
    MultiAgentKind,
    PromptCacheFeature,
    PromptLibrary,
    PromptsFeature,
    ReasoningContextFeature,
    ReasoningSealFeature,
    ResponseService,
    ResponseSetup,
    Rooms,
    Sealer,
    VectorStoreService,
    WebhookDeliverer,
    WebhookService,
    every,
    load_features,
)
from responsa.engine.projects import KeyDirectory, ProjectService
from responsa.engine.skills import SkillService
from responsa.engine.tools import ToolRegistry, load_tool_registry
from responsa.engine.tools.code_interpreter import CodeInterpreterKind
from responsa.engine.tools.file_search import FileSearchKind
from responsa.engine.tools.image_generation import ImageGenerationKind
from responsa.engine.tools.mcp import McpKind
from responsa.engine.tools.shell import ShellKind
from responsa.engine.tools.web_search import WebSearchKind
from responsa.engine.usage import SpendWatch, StorageSampler, UsageLedger, UsageReports
from responsa.external import SearchProvider
from responsa.http import HttpLimits, Limiter, Metrics, Permits, Services, batch_lines
from responsa.protocol import Capability
from responsa.store import PART_BYTES, SqlStore

from ._capabilities import by_name, log_capabilities, probe_capabilities, store_capability
from ._configured import (
    configured_backends,
    embedder,
    retention,
    run_subagent,
    sweep,
    sweep_interval,
    usage_reporter,
    webhook_sender,
)
from ._hosted_setup import containers_service, search_provider
from ._neighbours import WorkerNeighbours
from ._secret import secret_key
from ._workers import WorkerGroup

__all__ = ["BUILDERS", "Assembly"]


class Assembly:
    """What is being put together: the given parts (settings, workers' group, the limiter, metrics and
    limits the middleware already holds), then each builder's. An attribute exists once its builder
    has run; the order of :data:`BUILDERS` is the order of need."""

    tasks: TaskGroup
    """The server's task group, once ``_tasks`` has opened it (:meth:`start` asks for a task before)."""
    registry: BackendRegistry
    store: SqlStore
    neighbours: WorkerNeighbours | None
    provider: SearchProvider | None
    capabilities: list[Capability]
    files: FileService
    skills: SkillService
    containers: ContainerService
    code_status: dict[str, Any]
    vector_stores: VectorStoreService
    tools: ToolRegistry
    rooms: Rooms
    compactor: Compactor
    responses: ResponseService
    embeddings: EmbeddingService
    batches: BatchService
    webhooks: WebhookService
    projects: ProjectService
    ledger: UsageLedger
    usage_reports: UsageReports

    def __init__(self, app: Starlette, settings: Settings, group: WorkerGroup | None, stack: AsyncExitStack,
                 limiter: Limiter, metrics: Metrics, limits: HttpLimits, keys: KeyDirectory,
                 given: tuple[Backend, ...] = ()) -> None:  # fmt: skip
        self.app, self.settings, self.group, self.stack = app, settings, group, stack
        self.limiter, self.metrics, self.limits, self.keys = limiter, metrics, limits, keys
        self.permits = Permits(keys, limiter)
        self.given = given
        """Backends handed to ``create_app``, served before those the settings make."""
        self._waiting: list[tuple[Callable[..., Coroutine[Any, Any, object]], tuple[object, ...]]] = []
        self._tasks: TaskGroup | None = None

    def start(self, task: Callable[..., Coroutine[Any, Any, object]], *args: object) -> None:
        """Run ``task`` for the server's life: now, or when the task group opens (see ``_tasks``)."""
        if self._tasks is None:
            self._waiting.append((task, args))
        else:
            self._tasks.start_soon(task, *args)

    def open_tasks(self, tasks: TaskGroup) -> None:
        self._tasks = self.tasks = tasks
        for task, args in self._waiting:
            tasks.start_soon(task, *args)
        self._waiting.clear()


async def _tracing(made: Assembly) -> None:
    """Before the store opens: its writes are spans."""
    if tracing.configured_from_environment():
        made.stack.callback(tracing.shutdown)


async def _backends(made: Assembly) -> None:
    made.registry = BackendRegistry([*made.given, *await configured_backends(made.settings, made.group)])
    made.stack.push_async_callback(made.registry.aclose)
    made.metrics.workers = made.registry.workers
    made.start(made.registry.monitor)


async def _store(made: Assembly) -> None:
    made.store = SqlStore(made.settings.db_url, retention(made.settings))
    made.stack.push_async_callback(made.store.aclose)
    made.stack.push_async_callback(made.limiter.aclose)
    await made.store.migrate()


async def _projects(made: Assembly) -> None:
    """Projects and keys: the settings' written to the store, then the store's read into the gate's
    directory, and read again whenever another process changes them."""
    made.projects = ProjectService(made.store.projects(), made.keys)
    await made.projects.start(made.settings.api_keys)
    made.start(every, made.settings.keys_poll_secs, partial(made.keys.poll, _USE_FLUSH), "reading changed keys")


_USE_FLUSH = 60.0
"""How often a process writes when its keys were last used (seconds)."""


async def _usage(made: Assembly) -> None:
    """The usage ledger, written about once a second (and once more at shutdown, after the responses
    drained), and the Admin API's usage and costs reports read from it."""
    made.ledger = UsageLedger()
    made.ledger.attach(made.store.usage())
    made.stack.push_async_callback(made.ledger.flush)
    made.start(every, 1.0, made.ledger.flush, "writing usage")
    sampler = StorageSampler(made.store.vector_stores(), made.ledger)
    made.start(every, _STORAGE_SAMPLE, sampler.sample, "sampling vector stores' bytes")
    made.usage_reports = UsageReports(made.store.usage(), made.settings.prices, made.ledger, sampler)
    watch = SpendWatch(made.usage_reports, made.keys, made.store.projects())
    made.start(every, _SPEND_CHECK, watch.check, "checking spend limits")


_STORAGE_SAMPLE = 60.0
"""How often each process samples what the vector stores hold, for the usage report (seconds)."""
_SPEND_CHECK = 2.0
"""How often each process looks at the limited projects' spend this month (seconds)."""


async def _neighbours(made: Assembly) -> None:
    """Among ``--workers N``: the other workers, told of cancels at once."""
    group = made.group
    made.neighbours = (
        None if group is None else made.stack.enter_context(closing(WorkerNeighbours(group.neighbours_directory)))
    )


async def _tasks(made: Assembly) -> None:
    """The server's tasks, opened after what they use (closed after they end) and cancelled at shutdown
    once everything entered after them has closed (the running responses drained first)."""
    tasks = await made.stack.enter_async_context(anyio.create_task_group())
    made.stack.callback(tasks.cancel_scope.cancel)
    made.open_tasks(tasks)


async def _published_metrics(made: Assembly) -> None:
    """Among ``--workers N``: this worker's metrics published, to its end (what it counted stays in the
    sums: published once more after the responses drained)."""
    if made.group is not None:
        made.stack.push_async_callback(made.metrics.publish)
        made.start(every, 1.0, made.metrics.publish, "publishing this worker's metrics")


async def _capabilities(made: Assembly) -> None:
    made.provider = search_provider(made.settings)
    installed = None if made.group is None else made.group.installed  # a worker: probed by the parent
    made.capabilities = [
        store_capability(made.settings.db_url, "schema migrated to the newest revision"),
        *await probe_capabilities(made.settings, made.registry, made.limiter, made.provider, installed),
    ]
    log_capabilities(made.capabilities)


async def _files_and_containers(made: Assembly) -> None:
    """Files, and the code containers in their sandbox (as probed), idle ones expired."""
    settings = made.settings
    made.files = FileService(made.store.files(), settings.max_file_bytes, PART_BYTES)
    made.skills = SkillService(made.store.skills())
    sandbox = by_name(made.capabilities)["code_sandbox"]
    made.containers, made.code_status = await containers_service(settings, made.store, made.files, sandbox)
    made.stack.push_async_callback(made.containers.aclose)
    made.start(every, 30.0, made.containers.expire_idle, "the containers' expiry")


async def _vector_stores(made: Assembly) -> None:
    """Vector stores, ingesting in the server's tasks; ingestion a stop interrupted taken up again."""
    made.vector_stores = VectorStoreService(made.store.vector_stores(), made.files, made.tasks,
                                            embedder(made.settings, made.registry))  # fmt: skip
    await made.vector_stores.recover()


async def _tools(made: Assembly) -> None:
    """The tool kinds: the client-run ones, the server-run ones with their services, the plug-ins'."""
    pages = by_name(made.capabilities)["page_extraction"]
    made.rooms = Rooms()
    made.tools = load_tool_registry([
        McpKind.configured(made.settings),
        FileSearchKind(made.vector_stores),
        WebSearchKind.configured(made.settings, made.provider, pages),
        ImageGenerationKind(made.registry),
        CodeInterpreterKind(made.containers, made.code_status),
        ShellKind(made.containers, made.code_status, skills=made.skills),
        MultiAgentKind(made.rooms),
    ])  # fmt: skip


async def _responses(made: Assembly) -> None:
    """The create path; responses a crash left running are ended, leases renewed, cancels watched,
    and at shutdown the running ones drained."""
    settings = made.settings
    sealer = Sealer(secret_key(settings) if made.group is None else made.group.secret)
    made.compactor = Compactor(made.store, made.registry, sealer, made.tools)
    prompts = PromptLibrary(settings.prompts_dir)
    setup = ResponseSetup(
        store=made.store,
        backends=made.registry,
        tools=made.tools,
        background=made.tasks,
        on_usage=usage_reporter(made.limiter, made.metrics, made.ledger),
        sealer=sealer,
        prompts=prompts,
        hosted_tools=settings.hosted_tools,
        max_input_items=settings.max_input_items,
        admission=(settings.max_generations, settings.max_queued_generations, settings.max_queue_wait_secs),
        lease=settings.background_lease_secs,
        cancel_poll=settings.cancel_poll_secs,
        features=load_features(
            (  # in the order their runs take their hooks; then the plug-ins'
                PromptsFeature(prompts),
                ConfigurationFeature(),
                PromptCacheFeature(),
                ModerationFeature(made.registry),
                ReasoningContextFeature(),
                ReasoningSealFeature(sealer),
                CompactionFeature(made.compactor),
                BackgroundWindowsFeature(),
                MultiAgentFeature(made.rooms),
            )
        ),
        files=made.files,
        permits=made.permits,
    )
    made.responses = responses = ResponseService(setup)
    made.rooms.runner = partial(run_subagent, made.limiter, responses)
    made.metrics.held, made.metrics.in_line = responses.generations, responses.waiting
    made.stack.push_async_callback(responses.drain, settings.shutdown_grace_secs)
    await responses.leases.recover()
    made.start(responses.leases.watch_orphans)
    made.start(responses.leases.renew_forever)
    made.start(responses.watch_cancels, made.neighbours)


async def _retention_sweep(made: Assembly) -> None:
    """Always: files expire by their own ``expires_after``, whatever the retention settings."""
    made.start(every, sweep_interval(made.store.retention), partial(sweep, made.store),
                          "the retention sweep")  # fmt: skip


async def _batches(made: Assembly) -> None:
    made.embeddings = EmbeddingService(made.registry)
    settings = made.settings
    lines = batch_lines(made.responses, made.embeddings, made.limiter, settings.max_body_bytes,
                        made.permits, made.ledger.record)  # fmt: skip
    batches = made.store.batches()
    runner = BatchRunner(batches, made.files, lines, made.registry.models, settings.batch_concurrency,
                         settings.background_lease_secs, busy=partial(made.responses.interactive, 1.0))  # fmt: skip
    made.batches = BatchService(batches, made.files, lines, runner.wake)
    made.start(runner.serve)


async def _webhooks(made: Assembly) -> None:
    sender = webhook_sender(made.settings)
    outbox = made.store.webhooks()
    made.webhooks = WebhookService(outbox, sender)
    if made.settings.webhook_url is not None:
        if not made.settings.webhook_secret:
            raise RuntimeError("--webhook-url needs --webhook-secret (a whsec_... secret that signs deliveries)")
        await made.webhooks.put_static(made.settings.webhook_url, made.settings.webhook_secret)
    made.start(WebhookDeliverer(outbox, sender).serve)


async def _services(made: Assembly) -> None:
    """What the routes read, on the app's state."""
    made.app.state.services = Services(
        responses=made.responses,
        conversations=ConversationService(made.store, made.tools),
        files=made.files,
        vector_stores=made.vector_stores,
        compactor=made.compactor,
        limiter=made.limiter,
        permits=made.permits,
        metrics=made.metrics,
        limits=made.limits,
        catalog=made.registry.described(),
        workers=made.registry.workers,
        started_at=int(time.time()),
        tools=made.tools,
        capabilities=made.capabilities,
        containers=made.containers,
        embeddings=made.embeddings,
        images=ImagesApi(made.registry),
        batches=made.batches,
        webhooks=made.webhooks,
        skills=made.skills,
        projects=made.projects,
        usage=made.ledger,
        usage_reports=made.usage_reports,
        store_health=made.store.check_health,
        processes=1 if made.group is None else made.group.size,
    )


BUILDERS: tuple[Callable[[Assembly], Awaitable[None]], ...] = (
    _tracing,
    _backends,
    _store,
    _projects,
    _usage,
    _neighbours,
    _capabilities,
    _files_and_containers,
    _tasks,
    _published_metrics,
    _vector_stores,
    _tools,
    _responses,
    _retention_sweep,
    _batches,
    _webhooks,
    _services,
)
"""In order of need. At shutdown the stack unwinds in reverse: the running responses drained, this
worker's metrics published, the tasks cancelled and awaited, then the containers, the neighbours'
sockets, the limiter, the store and the backends closed."""
