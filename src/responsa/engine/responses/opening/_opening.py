"""Opening a run: everything between a parsed create request and an open model stream.

Admission comes first: a request the backend has no room for is refused (429) before any work is
done for it (history read, MCP listings, token counting), so that refusing is cheap under overload.
Anything that goes wrong here is an HTTP error and nothing is stored.
"""

from __future__ import annotations

import time
from collections.abc import AsyncIterator, Callable, Sequence
from contextlib import AsyncExitStack
from dataclasses import dataclass

from responsa import tracing
from responsa.backends import Backend, ModelEvent, ModelRequest
from responsa.protocol import (
    AdditionalTools,
    ConfigurationUpdate,
    CreateResponseRequest,
    InvalidRequest,
    Item,
    Reasoning,
    ResponseObject,
    StreamEvent,
    ToolSearchOutput,
)

from ...output import Timeline
from ...tools import Recorded, Replays, ToolPlan, ToolSetup, plan_client_tools, prepare_server_tools
from .._context import ContextChecks, load_history, normalize_input
from ..features._features import Answer, FeatureRun, Features, input_blocked, revised
from ..features._reasoning_seal import ReasoningSeal
from ..run._accumulate import OutputBuilder
from ..run._model_request import build_model_request
from ..run._run import NOTHING_USED, Run, RunContext, model_call_done, open_model_call
from ..run._server_calls import serve_calls
from ..run._truncation import token_counter, truncated
from ._admission import Admission
from ._apart import Apart, turn, waits_apart
from ._checks import check_request
from ._images import check_images
from ._input_files import read_input_files
from ._new_response import new_response, unavailable_hosted
from ._setup import ResponseSetup

__all__ = ["Opener"]


@dataclass(frozen=True)
class Asked:
    """One create as asked and checked so far, carried through the opening's stages (``_open``,
    ``_plan``) in place of a chain of parameters."""

    request: CreateResponseRequest
    tenant: str
    backend: Backend
    planned: ToolPlan | None = None
    """The request's client tools as its check planned them (see ``_plan``)."""
    fault: str | None = None
    history: Sequence[Item] | None = None
    """The context before the request, where the caller holds it (else it is read from the store)."""
    generate: bool = True
    deferred: bool = False
    """The model call opens once the run holds a slot (work waiting apart, see ``Run.turn``)."""
    features: tuple[FeatureRun, ...] = ()
    """The runs of the request features the request names (opened before it was checked)."""


class Opener:
    """Turns create requests into runs; holds what that needs, and each backend's admission."""

    def __init__(self, setup: ResponseSetup) -> None:
        self.prompts = setup.prompts
        """The reusable prompts creates may name (listed; ``PromptsFeature`` applies them)."""
        self._store = setup.store
        self._backends = setup.backends
        self._tools = setup.tools
        self._checks = ContextChecks(setup.tools)
        self._replays = Replays()
        self._sealer = setup.sealer
        self._hosted_tools = setup.hosted_tools
        self._max_input_items = setup.max_input_items
        self._features = Features(setup.features)
        self._files = setup.files
        self._permits = setup.permits
        self._admission_limits = setup.admission
        """(generations at once, requests waiting) per backend; a backend may run fewer at once."""
        self._admissions: dict[int, Admission] = {}
        self.interactive = 0
        """Runs that took the line (not waiting apart: a batch's lines, later completion windows), from
        admission to their end: while there are some, batches yield the CPU (see ``BatchRunner``)."""
        self.interactive_at = 0.0
        """When the last of them was received (``time.time``)."""

    async def open(
        self,
        request: CreateResponseRequest,
        fault: str | None,
        tenant: str,
        history: Sequence[Item] | None,
        generate: bool = True,
        apart: Apart | None = None,
    ) -> Run:
        """A run with its model stream open, holding one of its backend's slots until it ends.

        ``history`` is the context before this request when the caller holds it (a WebSocket
        connection's own cache of its last response); otherwise it comes from the store. Without
        ``generate`` (a WebSocket prewarm) the response is made, with its context, but the model is
        not called: it completes with no output. ``apart``: how work that waits apart for its slot
        whatever the request says does so (a batch's lines, see ``Admission.later``).
        """
        received = time.time()
        features = self._features.open(request)
        request = revised(features, request)
        planned = check_request(request, self._tools)
        if isinstance(request.input, list) and len(request.input) > self._max_input_items:
            raise InvalidRequest(
                f"Too many input items: {len(request.input)}; at most {self._max_input_items} are allowed.",
                param="input",
                code="too_many_items",
            )
        patience = 0.0 if apart is None else apart.patience  # a batch's line waits for its model's limits
        await self._permits(tenant, request.model, [tool.type for tool in request.tools], patience)
        backend = self._backends.resolve(request.model)
        cap = backend.default_max_output_tokens(request.model)
        if request.max_output_tokens is None and cap is not None:  # echoed, so the client sees the cap
            request = request.model_copy(update={"max_output_tokens": cap})
        stack = AsyncExitStack()
        admission = self._admission(backend)
        apart = apart or waits_apart(features)
        if apart is None:
            await admission.enter(tenant)
            stack.callback(admission.leave)
            self.interactive += 1
            self.interactive_at = received
            stack.callback(self._ended_interactive)
        attributes = {"gen_ai.request.model": request.model, "responsa.tenant": tenant,
                      "responsa.stream": request.stream, "responsa.background": request.background}  # fmt: skip
        span = tracing.start(f"response {request.model}", attributes)
        try:
            with tracing.current(span):  # what opening the run does (reads, listings, counts) is the span's
                asked = Asked(request, tenant, backend, planned, fault, history, generate,
                              deferred=apart is not None, features=features)  # fmt: skip
                run = await self._open(asked, stack)
        except BaseException as exc:
            await stack.aclose()
            tracing.finish(span, {}, f"{type(exc).__name__}: {exc}")
            raise
        run.span = span
        if apart is not None:
            run.turn = turn(admission, run, apart)
        run.builder.timeline.received_at(received)
        if span is not None:
            span.set_attribute("gen_ai.response.id", run.response.id)
        return run

    async def _open(self, asked: Asked, stack: AsyncExitStack) -> Run:
        plan = await self._plan(asked)
        ctx, context, request = plan.ctx, plan.context, plan.ctx.request
        backend = asked.backend
        timeline = Timeline()
        begun: list[_Begun] = []

        async def begin() -> _Begun:
            if not begun:
                begun.append(await _begin(plan, timeline))
            return begun[0]

        if plan.recorded:  # the model reads what the tools recorded (and what approved calls returned)
            await begin()
        if ctx.features and await input_blocked(ctx.features, ctx.input_items):  # the model must not read it
            start = await begin()
            ctx.prior = context
            blocked = model_call_done(reason="content_filter")
            return Run(ctx, start.response, start.builder, start.opening, blocked, stack)

        def build(items: list[Item]) -> ModelRequest:
            return build_model_request(ctx, [*items, *(begun[0].response.output if begun else ())])

        answer = Answer() if not asked.generate else None
        if ctx.features and answer is None:
            answer = await _answered(ctx.features, backend, context, build)
        if answer is not None:  # the model is not called (a prewarm, a compaction, `generate: false`)
            start = await begin()
            for made in answer.items:
                start.opening += start.builder.record(made)
            ctx.prior = context
            usage = answer.usage if answer.usage is not None else NOTHING_USED
            return Run(ctx, start.response, start.builder, start.opening, model_call_done(usage), stack)
        count = token_counter(backend, build)
        for feature in ctx.features:  # made smaller before it is fitted to the window (a compaction)
            if (fitted := await feature.fit(backend, context, count)) is not None:
                start = await begin()
                for made in fitted.items:
                    start.opening += start.builder.record(made)
                context = fitted.context
        context = await truncated(request, backend, context, count)
        if asked.deferred:  # opened once the run holds a slot (see Run.turn)
            model_events = _opened_later(stack, backend, build(context), timeline)
        else:
            model_events = await open_model_call(stack, backend, build(context), timeline)
        # Where the model reads none of it, the response is begun only now: the request reaches the
        # model without waiting for it, and it is built while the model thinks (time to first token).
        start = await begin()
        ctx.prior = context
        return Run(ctx, start.response, start.builder, start.opening, model_events, stack)

    async def count_input_tokens(self, request: CreateResponseRequest, tenant: str) -> int:
        """What ``usage.input_tokens`` of a create with this body would be: the model request a create
        builds (context, tools, what server-run tools record before the model reads), counted by the
        model's tokenizer."""
        features = self._features.open(request)
        request = revised(features, request)
        planned = check_request(request, self._tools)
        backend = self._backends.resolve(request.model)
        plan = await self._plan(Asked(request, tenant, backend, planned, features=features))
        request, recorded = plan.ctx.request, [made.item for made in plan.recorded]

        def build(items: list[Item]) -> ModelRequest:
            return build_model_request(plan.ctx, [*items, *recorded])

        context = await truncated(request, backend, plan.context, token_counter(backend, build))
        return await backend.count_tokens(build(context))

    async def _plan(self, asked: Asked) -> _Plan:
        """Everything a create decides before the response begins: the features its context names, its
        context as the model will read it (as the features read it: summaries in place of compaction
        items, reasoning another server sealed left out), its tools and what the server-run ones record,
        and the hosted tools left out. ``asked.planned``: the request's client tools as its
        check planned them, used unless the context changes them (a tool search's output, a
        configuration update)."""
        request, tenant, backend, planned, history = (
            asked.request,
            asked.tenant,
            asked.backend,
            asked.planned,
            asked.history,
        )
        store = self._store.scoped(tenant)
        if request.background and not store.retention.responses_enabled:  # as `store: false` is
            raise InvalidRequest("Background responses must be stored, and this server stores no responses "
                                 "(--responses-store-max-entries 0).", param="background")  # fmt: skip
        history = list(history) if history is not None else await load_history(store, request)
        input_items = await normalize_input(store, request, self._tools)
        context, scan = self._checks.checked(history, input_items)
        classes = scan.classes
        if scan.has_files:  # the model reads the files' text
            context = await read_input_files(self._files.for_tenant(tenant), context, len(history))
        features = self._features.open_in_context(request, classes, asked.features)
        for feature in features:
            request = await feature.plan(store, request, context)
        check_images(input_items, backend.reads_images(request.model), request.model)
        if planned is None or not classes.isdisjoint((ToolSearchOutput, ConfigurationUpdate, AdditionalTools)):
            planned = plan_client_tools(self._tools, request.tools, context, classes, len(history))
        tools = planned
        setup = ToolSetup(request, history, input_items, tools, tenant, backend.simulates_tools())
        recorded = await prepare_server_tools(setup)
        # Hosted tools the server runs itself (file_search, web_search...): every type of the kinds offered.
        offered = {kind_type for kind in tools.kind_names() for kind_type in self._tools.named(kind).tool_types}
        hosted = self._tools.hosted_tool_types()
        served = offered & hosted
        ignored = unavailable_hosted(request, backend, self._hosted_tools, hosted, served)
        unavailable = frozenset(entry["type"] for entry in ignored) | served
        for feature in features:
            context = feature.read(context)
        ctx = RunContext(request, store, backend, tools, unavailable, asked.fault, input_items,
                         features=features, replays=self._replays)  # fmt: skip
        return _Plan(ctx, context, recorded, ignored)

    def sealed_reasoning(self, response: ResponseObject, tenant: str) -> ResponseObject:
        """``response`` with each reasoning item sealed as a create asking for
        ``reasoning.encrypted_content`` seals it (for a retrieve that asks); as it is on a server that
        does not seal."""
        seal = ReasoningSeal(self._sealer, tenant)
        output: list[Item] = []
        for item in response.output:
            if isinstance(item, Reasoning):
                item = item.model_copy()
                seal.seal(item)
            output.append(item)
        return response.model_copy(update={"output": output})

    def generations(self) -> dict[str, int]:
        """Slots held now, over every backend: by runs that took the ``line``, by work waiting ``apart``."""
        apart = sum(admission.apart for admission in self._admissions.values())
        return {"line": sum(admission.active for admission in self._admissions.values()) - apart, "apart": apart}

    def waiting(self) -> int:
        """Requests in line for a slot now, over every backend (work waiting apart is not in a line)."""
        return sum(admission.waiting for admission in self._admissions.values())

    def _ended_interactive(self) -> None:
        self.interactive -= 1

    def _admission(self, backend: Backend) -> Admission:
        admission = self._admissions.get(id(backend))
        if admission is None:
            limit, queue, wait = self._admission_limits
            admission = self._admissions[id(backend)] = Admission(backend.parallel() or limit, queue, wait)
        return admission


async def _opened_later(
    stack: AsyncExitStack, backend: Backend, request: ModelRequest, timeline: Timeline
) -> AsyncIterator[list[ModelEvent]]:
    """The model call of a run that waited for its turn, opened on its first read."""
    async for batch in await open_model_call(stack, backend, request, timeline):
        yield batch


@dataclass
class _Plan:
    """What a create decided before its response begins (see ``Opener._plan``)."""

    ctx: RunContext
    context: list[Item]
    """History and input as the model will read them, before compaction inside the create and truncation."""
    recorded: Sequence[Recorded]
    ignored: list[dict[str, str]]


@dataclass
class _Begun:
    """The response as it starts: its object, its builder, and the events of what happened before the model ran."""

    response: ResponseObject
    builder: OutputBuilder
    opening: list[StreamEvent]


async def _begin(plan: _Plan, timeline: Timeline) -> _Begun:
    """The response object, its builder, and its opening events: lifecycle, what the tools recorded, the
    calls the server runs before the model reads them (approved MCP calls); the fields the request's
    features fill."""
    request, store = plan.ctx.request, plan.ctx.store
    response = new_response(request, stored=request.store and store.retention.responses_enabled)
    if plan.ignored:
        response.ignored_tools = plan.ignored  # an extension field (see docs/api.md)
    for feature in plan.ctx.features:
        feature.begin(response)
    builder = OutputBuilder(response, plan.ctx.tools, timeline)
    builder.features = builder.server.features = builder.emitter.watchers = plan.ctx.features
    builder.emitter.read = request.stream or request.background
    opening = builder.start()
    for made in plan.recorded:
        opening += builder.record(made)
    if builder.server.waiting:  # approved calls, made before the model reads them
        async for events in serve_calls(builder):
            opening += events
    return _Begun(response, builder, opening)


async def _answered(
    features: Sequence[FeatureRun], backend: Backend, context: list[Item], build: Callable[[list[Item]], ModelRequest]
) -> Answer | None:
    """The first answer a feature makes in the model's place (a prewarm, a compaction), or None."""
    for feature in features:
        if (answer := await feature.answer(backend, context, build)) is not None:
            return answer
    return None
