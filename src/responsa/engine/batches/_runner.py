"""The batch runner: in every process sharing the store, it checks new batches, runs lines and
finishes batches, each piece of work claimed by lease (see ``store/sql/_batches.py``).

Lines run below interactive traffic: each waits apart for a slot of its model (``Admission.later``,
behind every request in the line and every background run with a completion window), so a batch
fills the slots nobody else wants, up to ``concurrency`` lines at once per process; a request that
finds every slot taken stops the newest line running (pre-empted: it stores nothing) and takes its
slot, and the line goes back to the batch's pending lines to run again. Slots are not all: on a fast
backend lines cost the process's CPU as requests do, so while interactive runs are under way
(``busy``) and the process is using most of a core (:class:`CpuShare`), only :data:`BUSY_SHARE` of
``concurrency`` new lines start. With the CPU to spare (a backend that makes requests wait on a
model, not on this process), a batch runs at full width beside interactive traffic.
"""

from __future__ import annotations

import logging
import os
import secrets
import socket
import time
from collections.abc import Callable, Collection, Mapping

import anyio
import orjson
from anyio.abc import TaskGroup

from responsa.protocol import Batch, BatchLineError, FileObject, ResponsaError, new_id
from responsa.store import BatchFile, BatchRepository, ClaimedBatch, ClaimedLine

from ..files import FileService
from ..usage import IN_BATCH
from ._lines import BatchLines, check_file, line_error, line_result, usage_of

__all__ = ["BatchRunner"]

logger = logging.getLogger(__name__)

POLL = 1.0
"""Seconds between looks for work made by other processes (this process's own work wakes it at once)."""

BUSY_SHARE = 1 / 64
"""The part of ``concurrency`` a batch keeps running while interactive requests need the CPU."""

SATURATED = 0.6
"""The share of a core above which this process counts as busy (its event loop runs on one)."""


class CpuShare:
    """How much of a core this process used lately: ``time.process_time`` over wall time, sampled at
    most every quarter second. It counts every thread: the embedded model's decoding too, where it
    runs in this process (with ``--workers`` it runs in the model process)."""

    def __init__(self) -> None:
        self._at, self._cpu = time.monotonic(), time.process_time()
        self.share = 0.0

    def sample(self) -> float:
        now, cpu = time.monotonic(), time.process_time()
        if now - self._at >= 0.25:
            self.share = (cpu - self._cpu) / (now - self._at)
            self._at, self._cpu = now, cpu
        return self.share


_ENDED = {
    "cancelled": ("batch_cancelled", "The batch was cancelled before this request ran."),
    "expired": ("batch_expired", "This request could not be executed before the completion window expired."),
}


def _failed(batch: Batch, errors: list[BatchLineError]) -> Batch:
    batch.status, batch.failed_at = "failed", int(time.time())
    batch.errors = {"object": "list", "data": [error.model_dump() for error in errors]}
    return batch


class BatchRunner:
    def __init__(
        self,
        store: BatchRepository,
        files: FileService,
        endpoints: Mapping[str, BatchLines],
        models: Callable[[], Collection[str]],
        concurrency: int,
        lease: float,
        busy: Callable[[], bool] = lambda: False,
    ) -> None:
        self._store = store
        self._files = files
        self._endpoints = endpoints
        self._models = models
        self.concurrency = concurrency
        self._busy = busy
        self._cpu = CpuShare()
        self._lease = lease
        self.holder = f"{socket.gethostname()[:60]}:{os.getpid()}:{secrets.token_hex(4)}"
        self._held: set[tuple[str, int]] = set()
        self._wake = anyio.Event()
        self._everything = True
        """Whether the next look checks new and finished batches too (not only lines to run)."""

    def wake(self) -> None:
        """Look for work now (a batch was created or cancelled here)."""
        self._everything = True
        self._wake.set()

    async def serve(self) -> None:
        """Run batches for the server's lifetime."""
        async with anyio.create_task_group() as tasks:
            tasks.start_soon(self._renew_forever)
            while True:
                everything, self._everything = self._everything, False
                try:
                    await self._look(tasks, everything)
                except Exception:
                    logger.exception("looking for batch work failed")
                with anyio.move_on_after(POLL) as waited:
                    await self._wake.wait()
                self._everything |= waited.cancelled_caught
                self._wake = anyio.Event()

    async def _look(self, tasks: TaskGroup, everything: bool) -> None:
        """Claim lines to run; and, on a poll, a wake from this process, or when lines run out, batches
        to check and to finish. (A look after each line's end that made three claims was a fifth of
        the process's CPU beside interactive traffic, measured with py-spy.)"""
        now = time.time()
        if everything:
            for claimed in await self._store.claim_validation(now, now + self._lease):
                await self._validate(claimed)
        crowded = self._cpu.sample() > SATURATED and self._busy()
        limit = max(1, int(self.concurrency * BUSY_SHARE)) if crowded else self.concurrency
        free = limit - len(self._held)
        if free > 0:
            lines = await self._store.claim_lines(self.holder, now, now + self._lease, free)
            everything |= len(lines) < free  # lines ran out: a batch may be done
            for line in lines:
                self._held.add((line.batch_id, line.line))
                tasks.start_soon(self._run_line, line)
        if everything:
            for claimed in await self._store.claim_finishing(now, now + self._lease):
                await self._finish(claimed)

    async def _renew_forever(self) -> None:
        while True:
            await anyio.sleep(self._lease / 3)
            try:
                await self._store.renew_lines(self.holder, list(self._held), time.time() + self._lease)
            except Exception:
                logger.exception("renewing the leases of batch lines failed")

    async def _validate(self, claimed: ClaimedBatch) -> None:
        batch, store = claimed.batch, self._store.scoped(claimed.tenant)
        lines = self._endpoints[batch.endpoint]
        files = self._files.for_tenant(claimed.tenant)
        try:
            await files.get(batch.input_file_id)  # deleted since the batch was made: a 404 to report
            data = b"".join([part async for part in files.parts(batch.input_file_id)])
        except ResponsaError as error:
            gone = BatchLineError(code="invalid_file", message=error.message, param="input_file_id")
            await store.fail_batch(_failed(batch, [gone]))
            return
        checked = await anyio.to_thread.run_sync(check_file, data, batch.endpoint, lines, self._models())
        if checked.errors:
            await store.fail_batch(_failed(batch, checked.errors))
            return
        batch.status, batch.in_progress_at, batch.model = "in_progress", int(time.time()), checked.model
        if await store.start_batch(batch, checked.lines):
            self._wake.set()

    async def _run_line(self, line: ClaimedLine) -> None:
        """Run the line, or take the response an earlier run of it stored as its result (that run's
        process died before it recorded the result): a line's response is made once. Its use counts
        as batch (this task's own context: ``IN_BATCH``)."""
        IN_BATCH.set(True)
        key = (line.batch_id, line.line)
        store = self._store.scoped(line.tenant)
        endpoint = self._endpoints[line.endpoint]

        async def started(response_id: str) -> None:
            if not await store.note_response(self.holder, line.batch_id, line.line, response_id):
                raise _Taken  # another process runs the line now: this run must store nothing

        try:
            body = orjson.loads(line.request)
            patience = max(1.0, line.expires_at - time.time())
            preempted = anyio.CancelScope()
            result = None
            with preempted:
                try:
                    reply = None
                    if line.response_id is not None:  # an earlier run's: stored before its process died?
                        reply = await endpoint.stored(line.tenant, line.response_id, body)
                    if reply is None:
                        reply = await endpoint.run(line.tenant, body, patience, preempted.cancel, started)
                    state, result = "completed", line_result(line.custom_id, 200, reply)
                except ResponsaError as error:
                    state, result = "failed", line_result(line.custom_id, error.status_code, error.to_body())
            if result is None:  # stopped for a request that needed its slot: it runs again
                await store.release_line(self.holder, line.batch_id, line.line)
                return
            if not await store.finish_line(self.holder, line.batch_id, line.line, state, result):
                logger.info("batch %s line %d was taken by another process; its result here is dropped", *key)
        except _Taken:
            logger.info("batch %s line %d was taken by another process before its run began", *key)
        except Exception:
            logger.exception("batch %s line %d crashed; another pass runs it again", *key)
        finally:
            self._held.discard(key)
            self._wake.set()  # a line's end: look for the next lines (and the rest only if they ran out)

    async def _finish(self, claimed: ClaimedBatch) -> None:
        batch, store = claimed.batch, self._store.scoped(claimed.tenant)
        now = int(time.time())
        unfinished = await store.unfinished_results(batch.id)
        if batch.status == "cancelling":
            batch.status, batch.cancelled_at = "cancelled", now
        elif unfinished:
            batch.status, batch.expired_at = "expired", now
        else:
            batch.status, batch.completed_at = "completed", now
        output: list[str] = []
        errors: list[str] = []
        for state, result in await store.results(batch.id):
            (output if state == "completed" else errors).append(result)
        batch.usage = usage_of(output)
        if unfinished:
            code, message = _ENDED[batch.status]
            errors += [line_error(custom_id, code, message) for _, custom_id in unfinished]
        made = []
        if output:
            made.append(self._file(batch, "output", output))
            batch.output_file_id = made[-1].file.id
        if errors:
            made.append(self._file(batch, "error", errors))
            batch.error_file_id = made[-1].file.id
        if not await store.finish_batch(batch, made):
            logger.info("batch %s was finished by another process while this one wrote its files", batch.id)

    def _file(self, batch: Batch, suffix: str, lines: list[str]) -> BatchFile:
        data = ("\n".join(lines) + "\n").encode()
        now = int(time.time())
        expiry = (batch.__pydantic_extra__ or {}).get("output_expires_after")
        file = FileObject(
            id=new_id("file", "-"),
            bytes=len(data),
            created_at=now,
            filename=f"{batch.id}_{suffix}.jsonl",
            purpose="batch_output",
            expires_at=now + int(expiry["seconds"]) if expiry else None,
        )
        return BatchFile(file, data)


class _Taken(Exception):
    """The line's lease lapsed and another process holds it: this process's run of it stops."""
