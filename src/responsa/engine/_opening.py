"""Opening a run: everything between a parsed create request and an open model stream.

Admission comes first: a request the backend has no room for is refused (429) before any work is
done for it (history read, MCP listings, token counting), so that refusing is cheap under overload.
Anything that goes wrong here is an HTTP error and nothing is stored.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from contextlib import AsyncExitStack

from responsa import tracing
from responsa.backends import Backend, BackendRegistry, ModelRequest
from responsa.protocol import CreateResponseRequest, InvalidRequest, Item
from responsa.store import Store
from responsa.tools import McpConnector

from ._accumulate import OutputBuilder
from ._admission import Admission
from ._compaction import Compactor
from ._file_search import FILE_SEARCH, file_search_tool, plan_file_search
from ._images import check_images
from ._mcp import McpPlan, approved_calls, check_approvals, check_mcp_tools, plan_mcp
from ._new_response import new_response, unavailable_hosted
from ._prepare import build_model_request, check_request, load_history, normalize_input
from ._run import Run, open_model_call
from ._truncation import token_counter, truncated
from ._vector_stores import VectorStoreService
from .tools import plan_client_tools

__all__ = ["Opener"]


class Opener:
    """Turns create requests into runs; holds what that needs, and each backend's admission."""

    def __init__(
        self,
        store: Store,
        backends: BackendRegistry,
        mcp: McpConnector,
        compactor: Compactor | None,
        hosted_tools: str,
        max_input_items: int,
        admission: tuple[int, int],
        vector_stores: VectorStoreService | None = None,
    ) -> None:
        self._store = store
        self._vector_stores = vector_stores
        self._backends = backends
        self._mcp = mcp
        self._compactor = compactor
        self._hosted_tools = hosted_tools
        self._max_input_items = max_input_items
        self._admission_limits = admission
        """(generations at once, requests waiting) per backend; a backend may run fewer at once."""
        self._admissions: dict[int, Admission] = {}

    async def open(
        self, request: CreateResponseRequest, fault: str | None, tenant: str, history: Sequence[Item] | None
    ) -> Run:
        """A run with its model stream open, holding one of its backend's slots until it ends.

        ``history`` is the context before this request when the caller holds it (a WebSocket
        connection's own cache of its last response); otherwise it comes from the store.
        """
        received = time.time()
        check_request(request)
        if isinstance(request.input, list) and len(request.input) > self._max_input_items:
            raise InvalidRequest(
                f"Too many input items: {len(request.input)}; at most {self._max_input_items} are allowed.",
                param="input",
                code="too_many_items",
            )
        backend = self._backends.resolve(request.model)
        mcp = check_mcp_tools(request, self._mcp, backend.simulates_tools())
        cap = backend.default_max_output_tokens(request.model)
        if request.max_output_tokens is None and cap is not None:  # echoed, so the client sees the cap
            request = request.model_copy(update={"max_output_tokens": cap})
        stack = AsyncExitStack()
        await stack.enter_async_context(self._admission(backend).slot())
        attributes = {"gen_ai.request.model": request.model, "responsa.tenant": tenant,
                      "responsa.stream": request.stream, "responsa.background": request.background}  # fmt: skip
        span = tracing.start(f"response {request.model}", attributes)
        try:
            with tracing.current(span):  # what opening the run does (reads, listings, counts) is the span's
                run = await self._open(request, fault, tenant, history, backend, mcp, stack)
        except BaseException as exc:
            await stack.aclose()
            tracing.finish(span, {}, f"{type(exc).__name__}: {exc}")
            raise
        run.span = span
        run.builder.timeline.received_at(received)
        if span is not None:
            span.set_attribute("gen_ai.response.id", run.response.id)
        return run

    async def _open(
        self,
        request: CreateResponseRequest,
        fault: str | None,
        tenant: str,
        history: Sequence[Item] | None,
        backend: Backend,
        mcp: McpPlan,
        stack: AsyncExitStack,
    ) -> Run:
        store = self._store.scoped(tenant)
        searcher = await plan_file_search(
            request, self._vector_stores.for_tenant(tenant) if self._vector_stores else None, backend.simulates_tools()
        )
        served = {FILE_SEARCH} if searcher else set()  # hosted tools the server runs itself
        ignored = unavailable_hosted(request, backend, self._hosted_tools, served=served)
        history = list(history) if history is not None else await load_history(store, request)
        input_items = await normalize_input(store, request, history)
        check_images(input_items, backend.reads_images(request.model), request.model)
        response = new_response(request, stored=request.store and store.retention.responses_enabled)
        if ignored:
            response.ignored_tools = ignored  # type: ignore[attr-defined]  # an extension field (see docs/api.md)
        client = plan_client_tools(request.tools, [*history, *input_items])
        listings = await plan_mcp(mcp, history, set(client.routes)) if mcp.servers else []
        plan = mcp if mcp.servers or searcher is not None else None
        check_approvals(plan, history, input_items)
        if plan is not None and searcher is not None:  # the model calls the server's search as a function
            plan.routes[FILE_SEARCH] = FILE_SEARCH
            plan.tools.append(file_search_tool())
        builder = OutputBuilder(
            response,
            plan.routes if plan else None,
            plan.needs_approval if plan else None,
            client.routes,
        )
        builder.snapshots = request.stream or request.background
        opening = builder.start()
        for listing in listings:
            opening += builder.record_list_tools(listing)
        if plan is not None:
            for call in await approved_calls(plan, history, input_items):
                opening += builder.record_call(call)
        context = [*history, *input_items]
        if self._compactor is not None:
            context = self._compactor.expand(context, tenant)
        unavailable = frozenset(entry["type"] for entry in ignored) | served

        def build(items: list[Item]) -> ModelRequest:
            return build_model_request(
                request, [*items, *response.output], fault, client, plan, unavailable=unavailable
            )

        count = token_counter(backend, build)
        if self._compactor is not None:
            compaction, context = await self._compactor.compact_within(request, backend, context, count, tenant)
            if compaction is not None:
                opening += builder.record_compaction(compaction)
        context = await truncated(request, backend, context, count)
        model_events = await open_model_call(stack, backend, build(context), builder.timeline)
        run = Run(
            request,
            response,
            input_items,
            store,
            context,
            backend,
            builder,
            opening,
            model_events,
            stack,
            fault,
            plan,
            client,
            unavailable,
        )
        run.file_search = searcher
        return run

    def _admission(self, backend: Backend) -> Admission:
        admission = self._admissions.get(id(backend))
        if admission is None:
            limit, queue = self._admission_limits
            admission = self._admissions[id(backend)] = Admission(backend.parallel() or limit, queue)
        return admission
