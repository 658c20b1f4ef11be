"""The responses service: create (JSON or streamed), retrieve, delete, cancel, list input items.

The HTTP layer calls these methods and renders what they return or raise; all state lives in the
store, except which responses are generating right now in this process (for cancel).
"""

from __future__ import annotations

import copy
import logging
import time
from collections.abc import AsyncGenerator, AsyncIterator, Collection, Sequence
from dataclasses import replace
from typing import Any

import anyio

from responsa.protocol import (
    TERMINAL_STATUSES,
    Conflict,
    CreateResponseRequest,
    InvalidRequest,
    Item,
    LifecycleEvent,
    NotFound,
    ResponsaError,
    ResponseObject,
    StreamEvent,
    dump_dict,
)
from responsa.store import ItemPage, LoggedEvent, Order, ResponseFilter, ResponsePage, Store

from .._tenant_views import tenant_view
from ..output import ENCRYPTED_REASONING, KNOWN_INCLUDES, check_includes, create_view, with_includes
from .features._moderation import classify
from .opening._apart import Apart
from .opening._opening import Opener
from .opening._setup import ResponseSetup
from .run._cancels import CANCELLED_POLL, CancelWatch, Neighbours
from .run._event_log import EventLog, replay
from .run._leases import Leases
from .run._loop import RunLoop
from .run._run import Run

__all__ = ["ResponseService"]

logger = logging.getLogger(__name__)


class ResponseService:
    """Runs responses against the backends and keeps them in the store."""

    def __init__(self, setup: ResponseSetup) -> None:
        store = setup.store
        self._store = store
        self._backends = setup.backends
        self._background = setup.background
        self._running: dict[str, Run] = {}
        self.leases = Leases(store, setup.lease)
        self._on_usage = setup.on_usage
        self.tools = setup.tools
        """The tool kinds the server serves, each server-run one with its service."""
        self._opener = Opener(setup)
        self._loop = RunLoop(self._running, self.leases, setup.on_usage)
        self._cancels = CancelWatch(store, self._running, setup.cancel_poll)
        self.tenant = store.tenant
        """Whose responses this service sees and creates (``for_tenant`` makes the view of another)."""
        self._views: dict[str, ResponseService] = {}

    def for_tenant(self, tenant: str) -> ResponseService:
        """The same service over ``tenant``'s responses; what runs in this process is shared."""
        return tenant_view(self._views, tenant, self._view)

    def _view(self, tenant: str) -> ResponseService:
        view = copy.copy(self)  # shares the views too
        view.tenant = tenant
        return view

    @property
    def _scoped(self) -> Store:
        return self._store.scoped(self.tenant)

    async def start(
        self,
        request: CreateResponseRequest,
        fault: str | None = None,
        history: Sequence[Item] | None = None,
        generate: bool = True,
        apart: Apart | None = None,
    ) -> Run:
        """Validate, rebuild context, do the MCP groundwork and open the model stream (see ``Opener``)."""
        return await self._opener.open(request, fault, self.tenant, history, generate, apart)

    def interactive(self, within: float) -> bool:
        """Whether runs that take the line (not a batch's lines) are under way in this process, or one
        was received less than ``within`` seconds ago."""
        return self._opener.interactive > 0 or time.time() - self._opener.interactive_at < within

    def generations(self) -> dict[str, int]:
        """Generation slots held now, by how they were taken (see ``Opener.generations``)."""
        return self._opener.generations()

    def waiting(self) -> int:
        """Requests in line for a generation slot now (see ``Opener.waiting``)."""
        return self._opener.waiting()

    async def moderate(self, texts: list[str], model: str | None) -> dict[str, Any]:
        """``POST /v1/moderations`` (see ``_moderation.classify``)."""
        return await classify(self._backends, texts, model)

    def prompts(self) -> list[dict[str, Any]]:
        """The reusable prompts a create can name (``--prompts-dir``), with their versions."""
        return self._opener.prompts.listing()

    async def input_tokens(self, request: CreateResponseRequest) -> int:
        """What ``usage.input_tokens`` of a create with this body would be (see ``Opener``)."""
        return await self._opener.count_input_tokens(request, self.tenant)

    def events(self, run: Run) -> AsyncGenerator[list[StreamEvent]]:
        """Drive a started run to its end, yielding its stream events in batches (see ``RunLoop``)."""
        return self._loop.events(run)

    async def launch(self, run: Run) -> ResponseObject:
        """Start a background run; returns the response as queued. It goes on without any client."""
        if self._background is None:
            raise ResponsaError("Background responses need the server's task group.")
        created = run.opening[0]
        assert isinstance(created, LifecycleEvent)
        queued = created.response
        store = run.ctx.store
        try:
            await store.save_response(queued, run.ctx.input_items, lease_until=self.leases.take(queued.id))
        except BaseException:  # not stored (a full disk...): the run never starts
            self.leases.release(queued.id)
            with anyio.CancelScope(shield=True):
                await run.exit_stack.aclose()
            run.end_span()
            raise
        run.saving.inputs_saved = True
        run.saving.log = EventLog(store, run.response.id, run.event_json)
        self._running[run.response.id] = run
        self._cancels.recheck()
        self._background.start_soon(run.saving.log.write_behind)
        self._background.start_soon(self._drive, run)
        return queued

    async def _drive(self, run: Run) -> None:
        assert run.saving.log is not None
        try:
            async for events in self.events(run):
                run.saving.log.extend(events)
        except Exception:  # a bug must not take the server's task group (and every other run) down
            logger.exception("background response %s crashed", run.response.id)

    async def follow(self, response_id: str, after: int) -> AsyncIterator[list[LoggedEvent]]:
        """The events of a background response after sequence number ``after``, in batches, live until it ends."""
        run = self._local(response_id)
        if run is not None and run.saving.log is not None:
            return run.saving.log.follow(after)
        response = await self.get(response_id)
        if not response.background:
            raise InvalidRequest(
                "Only background responses can be streamed again; this one was not created with 'background: true'.",
                param="stream",
            )
        return replay(self._scoped, response_id, after)

    async def drain(self, grace: float) -> None:
        """Shutdown: let background runs finish for ``grace`` seconds, then stop the rest as failed."""
        runs = [run for run in self._running.values() if run.saving.log is not None]
        with anyio.move_on_after(grace):
            for run in runs:
                await run.done.wait()
        for run in runs:
            if not run.done.is_set():
                run.stop("shut_down")
        with anyio.move_on_after(10):
            for run in runs:
                await run.done.wait()

    async def create(self, run: Run) -> ResponseObject:
        """Run to the end without streaming; a failure while generating becomes the HTTP error."""
        async for _events in self.events(run):
            pass
        if run.error is not None:
            raise run.error
        return create_view(run.response)

    async def create_json(self, run: Run) -> dict[str, Any]:
        """:meth:`create`, as the JSON the reply carries: the form the store saved, where that is what the
        create shows (no optional data hidden), so a response is dumped once, not once more for its reply."""
        response = await self.create(run)
        if run.saving.saved_json is not None and response is run.response:
            return run.saving.saved_json
        return dump_dict(response)

    def _local(self, response_id: str) -> Run | None:
        """The run of this response in this process, if it is one of this tenant's."""
        run = self._running.get(response_id)
        return run if run is not None and run.tenant == self.tenant else None

    async def get(self, response_id: str, include: Collection[str] | None = None) -> ResponseObject:
        """The stored response; with ``include`` (a retrieve's query), showing just what it asks for."""
        if include is not None:
            check_includes(include, KNOWN_INCLUDES)
        response = await self._scoped.get_response(response_id)
        if response is None:
            raise NotFound(f"Response with id '{response_id}' not found.", param="response_id")
        if include is None:
            return create_view(response)
        if ENCRYPTED_REASONING in include and ENCRYPTED_REASONING not in response.shown_includes:
            response = self._opener.sealed_reasoning(response, self.tenant)  # as a create asking would have
        return with_includes(response, include)

    async def timeline(self, response_id: str) -> dict[str, Any]:
        """The response's timing record (see ``Timeline``); responses stored before it existed have none."""
        response = await self.get(response_id)
        marks = await self._scoped.get_timing(response_id)
        usage = response.usage.model_dump(mode="json") if response.usage else None
        return {"object": "response.timeline", "response_id": response_id, "status": response.status,
                "usage": usage, "marks": marks or []}  # fmt: skip

    async def list_responses(
        self, wanted: ResponseFilter, *, limit: int, order: Order, after: str | None, before: str | None
    ) -> ResponsePage:
        """A page of this tenant's stored responses, as ``wanted``."""
        store = self._scoped
        page = await store.list_responses(wanted, limit=limit, order=order, after=after, before=before)
        return replace(page, responses=[create_view(response) for response in page.responses])

    async def delete(self, response_id: str) -> None:
        if not await self._scoped.delete_response(response_id):
            raise NotFound(f"Response with id '{response_id}' not found.", param="response_id")

    async def cancel(self, response_id: str) -> ResponseObject:
        """Stop a response that is generating, here or in another process sharing the store.

        Cancelling twice is harmless; a finished response is a 409.
        """
        run = self._local(response_id)
        if run is not None:
            run.stop("cancelled")
            await run.done.wait()
            return await self.get(response_id)
        response = await self.get(response_id)
        if response.status == "cancelled":
            return response
        if response.status in TERMINAL_STATUSES:
            raise Conflict(
                f"Cannot cancel a response that is already {response.status}.",
                param="response_id",
                code="response_not_cancellable",
            )
        await self._store.request_cancel(response_id)
        self._cancels.asked()
        with anyio.move_on_after(self.leases.length):
            while response.status not in TERMINAL_STATUSES:
                await anyio.sleep(CANCELLED_POLL)
                response = await self.get(response_id)
            return response
        # Nobody acted on it within a lease: no process is running it any more.
        response.status = "cancelled"
        await self._scoped.save_response(response)
        return response

    async def watch_cancels(self, neighbours: Neighbours | None = None) -> None:
        """Act on cancels asked for in other processes, for responses running in this one; ``neighbours``:
        this server's other processes on this machine, told of cancels asked here and heard at once."""
        await self._cancels.watch(neighbours)

    async def input_items(
        self,
        response_id: str,
        *,
        limit: int,
        order: Order,
        after: str | None,
        before: str | None,
    ) -> ItemPage:
        store = self._scoped
        page = await store.list_input_items(response_id, limit=limit, order=order, after=after, before=before)
        if page is None:
            raise NotFound(f"Response with id '{response_id}' not found.", param="response_id")
        return page
