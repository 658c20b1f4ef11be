"""The batch repository: batches, their lines (each run once, its result kept beside it) and the files
a finished batch leaves, for one tenant; claims by lease so that processes share the work."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

from responsa.protocol import Batch, FileObject

__all__ = ["BatchFile", "BatchRepository", "ClaimedBatch", "ClaimedLine", "InputLine"]


@dataclass(frozen=True)
class InputLine:
    line: int
    custom_id: str
    request: str
    """The line's request (``body``) as JSON."""


@dataclass(frozen=True)
class ClaimedLine:
    tenant: str
    batch_id: str
    endpoint: str
    line: int
    custom_id: str
    request: str
    expires_at: int
    """When the batch's completion window ends."""
    response_id: str | None = None
    """The response an earlier run of the line was making (see ``note_response``), if one was."""


@dataclass(frozen=True)
class ClaimedBatch:
    tenant: str
    batch: Batch


@dataclass(frozen=True)
class BatchFile:
    """An output or error file a finished batch leaves: its row and its bytes."""

    file: FileObject
    data: bytes


class BatchRepository(Protocol):
    """Batches of ``tenant`` (``scoped`` makes the view of another); the claims see every tenant's."""

    tenant: str

    def scoped(self, tenant: str) -> BatchRepository: ...

    async def create_batch(self, batch: Batch) -> None: ...

    async def get_batch(self, batch_id: str) -> Batch | None:
        """The batch with its ``request_counts`` as they are now."""

    async def list_batches(self, *, limit: int, after: str | None) -> tuple[list[Batch], bool]: ...

    async def request_cancel(self, batch_id: str, at: int) -> Batch | None:
        """``cancelling`` while its lines run (``cancelled`` at once while it is validating; a batch already
        finalizing ends as it would have); the batch."""

    async def claim_validation(self, now: float, until: float) -> list[ClaimedBatch]:
        """Batches waiting for validation (or whose validator stopped), held until ``until``."""

    async def start_batch(self, batch: Batch, lines: Sequence[InputLine]) -> bool:
        """Its lines stored and the batch ``in_progress``, in one transaction; False if it was cancelled."""

    async def fail_batch(self, batch: Batch) -> None:
        """``failed`` (its input did not pass), with its webhook event, unless it was cancelled meanwhile."""

    async def claim_lines(self, holder: str, now: float, until: float, limit: int) -> list[ClaimedLine]:
        """Up to ``limit`` lines of running batches no live process holds, held by ``holder`` until ``until``."""

    async def renew_lines(self, holder: str, keys: Sequence[tuple[str, int]], until: float) -> None: ...

    async def note_response(self, holder: str, batch_id: str, line: int, response_id: str) -> bool:
        """Remember, before its run can store it, the response the line's run is making, if ``holder``
        still holds the line: a later run that finds it stored takes it as the result (done once)."""

    async def finish_line(self, holder: str, batch_id: str, line: int, state: str, result: str) -> bool:
        """The line's result, if ``holder`` still holds it (else another process took it: dropped)."""

    async def release_line(self, holder: str, batch_id: str, line: int) -> None:
        """The line pending again, if ``holder`` holds it (it was stopped before its end: it runs again)."""

    async def claim_finishing(self, now: float, until: float) -> list[ClaimedBatch]:
        """Batches with no line left to run (all run, cancelled, or past their window), held until ``until``."""

    async def unfinished_results(self, batch_id: str) -> list[tuple[int, str]]:
        """The lines never run, as (line, custom_id), in order."""

    async def results(self, batch_id: str) -> list[tuple[str, str]]:
        """Every line's (state, result) in line order, for lines that ran."""

    async def finish_batch(self, batch: Batch, files: Sequence[BatchFile]) -> bool:
        """The batch in its final state with its files, and its webhook events, in one transaction;
        False (and nothing written) if another process finished it first."""
