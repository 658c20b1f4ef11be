"""The agentic loop: a started run driven to its end, turn by turn, with the store following along.

Each model turn ends in one :class:`~._outcomes.Outcome`: ``again`` (the server ran calls; the model
reads their results next), ``needs_client`` (a call the client runs, or an approval it gives, ends the
response; where a feature has it wait for the client's answers while it runs, they are placed in the
output and it goes ``again``), ``final`` (the model answered), ``cancelled``, or what steering and a
shutdown add. The response is saved before its terminal event goes out: a client that saw a response
end can always retrieve it.
"""

from __future__ import annotations

import asyncio
import logging
import time
from asyncio import CancelledError
from collections.abc import AsyncGenerator, AsyncIterator, Callable
from dataclasses import replace

import anyio

from responsa import tracing
from responsa.backends import TokenUsage
from responsa.protocol import (
    TERMINAL_EVENT_TYPES,
    ErrorEvent,
    ErrorPayload,
    Item,
    ResponsaError,
    ServiceUnavailable,
    StorageUnavailable,
    StreamEvent,
)

from ...output import create_view
from ...usage import UsageHook
from .._context import conversation_items
from ..features._features import client_inbox, held, output_withheld
from ._accumulate import OutputBuilder
from ._leases import Leases
from ._model_request import FIRST_TURN, Turn, build_model_request
from ._outcomes import Outcome, outcome_of
from ._run import Run, open_model_call
from ._server_calls import serve_calls

__all__ = ["MAX_ROUNDS", "RunLoop"]

logger = logging.getLogger(__name__)

MAX_ROUNDS = 10
"""Model turns in one response at most; the last one may not call tools."""

_STOPPED: dict[Outcome, Callable[[OutputBuilder], list[StreamEvent]]] = {
    Outcome.CANCELLED: OutputBuilder.cancel,
    Outcome.STEERED: OutputBuilder.steered,
    Outcome.INTERRUPTED: OutputBuilder.interrupted,
}
"""How a run that was asked to stop ends, by why."""


async def _count_cut_turn(run: Run, turn: Turn, outcome: Outcome) -> None:
    """Count what the turn an interrupt cut used, which the model stopped before counting, as OpenAI
    reports it (nothing where the interrupt came between turns, or for another stop): its input as the
    backend counts a request (the model request it read: the context and the output before it), its
    output estimated from the text it wrote, at about four characters a token."""
    cut = run.builder.cut_turn() if outcome is Outcome.INTERRUPTED else None
    if cut is None:
        return
    start, written = cut
    read = build_model_request(run.ctx, [*run.ctx.prior, *run.response.output[:start]], turn)
    run.builder.count(TokenUsage(await run.ctx.backend.count_tokens(read), -(-len(written) // 4)))


async def _between_turns(run: Run, calls: int) -> AsyncIterator[list[StreamEvent]]:
    """What the turn left waiting: the server's calls, then the client's answers (where it waits for them)."""
    if calls and not run.cancel_requested.is_set():
        async for events in _served(run, calls):
            yield events
    if run.builder.needs_client:
        async for events in _answered(run):
            yield events


async def _served(run: Run, calls: int) -> AsyncIterator[list[StreamEvent]]:
    """The calls the turn left for the server, run. A cancel stops a call at once; a steer lets the
    call running finish, and starts no other."""
    signal = run.cancel_requested
    server_calls = serve_calls(run.builder, run.span, run.steered_between_calls)
    run.serving_calls = True
    try:
        while (events := await signal.next(server_calls)) is not None:
            yield events
    finally:
        run.serving_calls = False
    if run.stopping == "steered":
        signal.set()
    run.tool_calls_made += calls


async def _answered(run: Run) -> AsyncIterator[list[StreamEvent]]:
    """The client's answers to the calls the turn left for it, placed in the output as they arrive,
    where a feature has the response wait for them while it runs (a cancel stops the wait); else
    nothing (the response ends there, as it always has)."""
    inbox = client_inbox(run.ctx.features)
    if inbox is None or not inbox.open:
        return
    answers = inbox.answers(run.builder.awaiting)
    while (items := await run.cancel_requested.next(answers)) is not None:
        yield run.builder.answered(items)


class RunLoop:
    """Drives runs; shares with the service which runs are in this process, and their leases."""

    def __init__(
        self,
        running: dict[str, Run],
        leases: Leases,
        on_usage: UsageHook | None = None,
    ) -> None:
        self._running = running
        self._leases = leases
        self._on_usage = on_usage

    async def events(self, run: Run) -> AsyncGenerator[list[StreamEvent]]:
        """Drive a started run to its end, yielding its stream events in batches (those that happen
        together, such as the tokens of one network read); the store follows along.

        With server-run tools this is the agentic loop: the calls the model made are run and the model
        is asked again, until it answers, calls a client tool, needs an approval, or runs out of its
        tool-call budget (``max_tool_calls``) or rounds.
        """
        builder = run.builder
        self._running[run.response.id] = run
        try:
            if run.turn is not None:  # background work with a later completion window: its turn first
                await run.cancel_requested.next(run.turn)  # still queued; a cancel breaks the wait
            if run.ctx.request.background:
                await run.ctx.store.save_response(run.response)  # queued -> in_progress
            elif run.response.store and run.ctx.request.stream:
                await self._record_start(run)
            yield run.opening
            turns = self._turns(run)
            if run.ctx.features and builder.emitter.read:
                turns = held(run.ctx.features, turns, lambda: builder.finished)
            try:
                async for events in turns:
                    yield await self._stored_end(run, events) if builder.finished else events
            except ResponsaError as error:
                run.error = error
                yield await self._stored_end(run, builder.fail(error))
        finally:
            if not builder.finished:
                builder.cancel()
            try:
                if not (run.released and run.saving.persisted):  # else all was done as it ended (see _stored_end)
                    with anyio.CancelScope(shield=True):
                        await self._wind_up(run)
            except StorageUnavailable as error:  # it stays unfinished, leased to no one: see Leases.recover
                logger.warning("response %s could not be stored as ended: %s", run.response.id, error.reason)
            finally:
                run.end_span()
                if run.saving.log is not None:
                    run.saving.log.end()
                self._leases.release(run.response.id)
                self._running.pop(run.response.id, None)
                for feature in run.ctx.features:
                    feature.ended()
                run.done.set()

    async def _wind_up(self, run: Run) -> None:
        """What the run holds released, and its final state saved (if it was not as it ended)."""
        await self._release(run)
        if run.saving.log is not None:
            # Every event is stored when the response is stored as ended (see replay).
            run.saving.log.close()
            await run.saving.log.drained.wait()
        await self._persist_once(run)
        if run.saving.log is not None:
            run.saving.log.settle()

    @staticmethod
    async def _release(run: Run) -> None:
        """Close what the run holds: its model call, its backend slot, its tool sessions."""
        if not run.released:
            run.released = True
            await run.exit_stack.aclose()

    async def _turns(self, run: Run) -> AsyncIterator[list[StreamEvent]]:
        """The model's turns and the calls the server runs for each, until one ends the response. Each
        turn ends in one :class:`Outcome`, a value computed in place (:func:`outcome_of`). One generator
        for all the turns: a generator a turn put one more hop on every batch."""
        builder, signal = run.builder, run.cancel_requested
        turn = FIRST_TURN
        for round_number in range(1, MAX_ROUNDS + 1):
            first = True
            builder.begin_turn()
            builder.ready_for_text()
            signal.bind()
            model_events = run.model_events
            while not signal.is_set():
                signal.waiting = True  # a cancel now breaks the wait at once (see CancelSignal)
                try:
                    batch = await model_events.__anext__()
                except StopAsyncIteration:
                    break
                except CancelledError:
                    if signal.took_back():
                        break
                    raise
                finally:
                    signal.waiting = False
                if first:
                    builder.timeline.mark("model.first_output")
                    first = False
                yield builder.feed_all(batch)
            calls = builder.server.waiting
            if (calls and not signal.is_set()) or builder.needs_client:  # no generator where none waits (most turns)
                async for events in _between_turns(run, calls):
                    yield events
            outcome = outcome_of(run, calls)
            if outcome is Outcome.SHUT_DOWN:
                raise ServiceUnavailable("The server shut down before this response finished.", code="server_shutdown")
            stopped = _STOPPED.get(outcome)
            if stopped is not None:  # cancelled, steered, interrupted: the builder's end for it
                await _count_cut_turn(run, turn, outcome)
                yield stopped(builder)
                return
            if outcome is Outcome.STEERED_AT_CLIENT:
                yield builder.settle()  # it ends as it is, the steering with it
            if outcome is not Outcome.AGAIN:  # final, needs_client (steered at the client among them), spent
                break
            # again: a forced choice is met once the server has run the call it forced (as OpenAI does).
            turn = replace(turn, calls_made=run.tool_calls_made, last=round_number + 1 >= MAX_ROUNDS,
                           choice_met=True, output_tokens=builder.output_tokens)  # fmt: skip
            request = build_model_request(run.ctx, [*run.ctx.prior, *run.response.output], turn)
            with tracing.current(run.span):
                run.model_events = await open_model_call(run.exit_stack, run.ctx.backend, request, builder.timeline)
        if run.ctx.features and await output_withheld(run.ctx.features, run.response):
            yield builder.withheld()
            return
        yield builder.complete(spent=outcome is Outcome.SPENT)

    async def _record_start(self, run: Run) -> None:
        """Write the in-progress response off the stream's path, in a task of its own: the first tokens
        need not wait for the disk (the final save waits for this one)."""
        run.saving.recorded = asyncio.Event()

        async def record(recorded: asyncio.Event) -> None:
            try:
                with tracing.current(run.span):
                    lease = self._leases.take(run.response.id)
                    await run.ctx.store.save_response(run.response, run.ctx.input_items, lease_until=lease)
                run.saving.inputs_saved = True
            except StorageUnavailable as error:  # the final save tries again, inputs and all
                logger.warning("response %s could not be stored as started: %s", run.response.id, error.reason)
            except Exception:  # a bug: the final save still tries, and the server goes on
                logger.exception("response %s: storing it as started failed", run.response.id)
            finally:
                recorded.set()

        # A plain task, not one of the server's task group: starting one of those cost three times as
        # much (~135,000 instructions against 44,000, with its event), and this one needs none of its
        # keeping: it ends on its own and sets ``recorded`` however it ends.
        run.saving.recording = asyncio.get_running_loop().create_task(record(run.saving.recorded))

    async def _stored_end(self, run: Run, events: list[StreamEvent]) -> list[StreamEvent]:
        """The batch that ends the response, once the response is stored. If the store cannot take it,
        the client must not see the response end: its terminal event becomes an ``error`` event (with
        the same sequence number) saying why, and a retry may succeed.

        Unless events follow the response's end (a background run's log), what the run holds is
        released here too, in the same shield, rather than after its last event (one shield less)."""
        with anyio.CancelScope(shield=True):
            try:
                await self._persist_once(run)
            except StorageUnavailable as error:
                run.error = error
                events = self._failed_save(run, events, error)
            else:
                if run.saving.saved_json is not None and events and events[-1].type in TERMINAL_EVENT_TYPES:
                    run.builder.emitter.encode_end(events[-1], run.saving.saved_json)
            if run.saving.log is None:
                await self._release(run)
        return events

    @staticmethod
    def _failed_save(run: Run, events: list[StreamEvent], error: StorageUnavailable) -> list[StreamEvent]:
        """``events`` with an ``error`` event in place of the terminal one (or after the last, for a cancel)."""
        payload = ErrorPayload(type=error.error_type, code=error.code, message=error.message)
        failure = ErrorEvent(code=error.code, message=error.message, error=payload, sequence_number=0)
        if events and events[-1].type in TERMINAL_EVENT_TYPES:
            failure.sequence_number = events[-1].sequence_number
            return [*events[:-1], failure]
        return [*events, run.builder.emitter.emit(failure)]  # a cancel's end has no terminal event

    async def _persist_once(self, run: Run) -> None:
        """The final save, before the terminal event goes out: a client that saw a response end can
        always retrieve it. Background runs save at the very end instead, with the end of their event
        log once the rest is stored (see replay); the save cannot be cut short, or a conversation
        could get a turn twice (its callers shield it)."""
        if run.saving.persisted or run.saving.discarded or (run.saving.log is not None and not run.saving.log.closed):
            return
        run.saving.persisted = True
        with tracing.current(run.span):
            await self._persist(run)

    async def _persist(self, run: Run) -> None:
        """Final save; a conversation gains this turn's input and output only if the turn succeeded."""
        if run.saving.recorded is not None:
            await run.saving.recorded.wait()
        response, store = run.response, run.ctx.store
        if self._on_usage is not None:  # every response, with tokens or not (a failed one counts too)
            metered = run.ctx.tools.kinds.metered(response.output) if response.output else {}
            latency_ms = int((time.time() - run.builder.timeline.marks[0]["at"]) * 1000)
            await self._on_usage(run.tenant, response, metered, latency_ms)
        turn: list[Item] = []
        if response.conversation and response.status in ("completed", "incomplete"):
            turn = conversation_items([*run.ctx.input_items, *create_view(response).output], run.ctx.tools.kinds)
        if response.store:
            inputs = None if run.saving.inputs_saved else run.ctx.input_items
            end = run.saving.log.tail() if run.saving.log is not None else []
            timing = run.builder.timeline.ended(response)
            run.saving.saved_json = await store.save_response(
                response, inputs, append_to_conversation=turn, events=end, timing=timing
            )
        elif turn and response.conversation:
            await store.conversations().append_conversation_items(response.conversation["id"], turn)
