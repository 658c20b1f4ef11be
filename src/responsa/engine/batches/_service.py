"""The batches service: create (checked against the input file and the endpoints served), retrieve,
list and cancel, each tenant seeing only its own; the work itself is the :class:`BatchRunner`'s."""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping

from responsa.protocol import (
    BATCH_TERMINAL_STATUSES,
    Batch,
    Conflict,
    CreateBatchRequest,
    InvalidRequest,
    NotFound,
    new_id,
)
from responsa.store import BatchRepository

from .._tenant_views import tenant_view
from ..files import FileService
from ._lines import BatchLines

__all__ = ["WINDOWS", "BatchService"]

WINDOWS = {"24h": 24 * 3600}
"""The completion windows a batch may ask for (OpenAI's one)."""


def _not_found(batch_id: str) -> NotFound:
    return NotFound(f"No batch found with id '{batch_id}'.", param="batch_id")


class BatchService:
    def __init__(
        self,
        store: BatchRepository,
        files: FileService,
        endpoints: Mapping[str, BatchLines],
        woken: Callable[[], None] = lambda: None,
    ) -> None:
        self._store = store
        self._files = files
        self.endpoints = endpoints
        """The endpoints whose requests a batch may hold, each with how its lines run."""
        self._woken = woken
        self._views: dict[str, BatchService] = {}

    def for_tenant(self, tenant: str) -> BatchService:
        return tenant_view(self._views, tenant, self._view)

    def _view(self, tenant: str) -> BatchService:
        return BatchService(self._store.scoped(tenant), self._files.for_tenant(tenant), self.endpoints, self._woken)

    async def create(self, request: CreateBatchRequest) -> Batch:
        """A ``validating`` batch: its lines are read and checked by the runner, as OpenAI does."""
        if request.endpoint not in self.endpoints:
            served = ", ".join(sorted(self.endpoints))
            raise InvalidRequest(
                f"Invalid 'endpoint': {request.endpoint!r}. Batches here run {served}.",
                param="endpoint",
                code="invalid_value",
            )
        if request.completion_window not in WINDOWS:
            raise InvalidRequest(
                f"Invalid 'completion_window': {request.completion_window!r}. Expected '24h'.",
                param="completion_window",
                code="invalid_value",
            )
        file = await self._files.get(request.input_file_id)  # a 404 naming the file
        if file.purpose != "batch":
            raise InvalidRequest(
                f"The file {file.id} was uploaded with purpose {file.purpose!r}; a batch's input "
                "file must have purpose 'batch'.",
                param="input_file_id",
                code="invalid_value",
            )
        now = int(time.time())
        batch = Batch(
            id=new_id("batch"),
            endpoint=request.endpoint,
            input_file_id=file.id,
            completion_window=request.completion_window,
            status="validating",
            created_at=now,
            expires_at=now + WINDOWS[request.completion_window],
            metadata=request.metadata,
        )
        if request.output_expires_after is not None:
            batch.__pydantic_extra__ = {
                **(batch.__pydantic_extra__ or {}),
                "output_expires_after": request.output_expires_after.model_dump(),
            }
        await self._store.create_batch(batch)
        self._woken()
        return batch

    async def get(self, batch_id: str) -> Batch:
        batch = await self._store.get_batch(batch_id)
        if batch is None:
            raise _not_found(batch_id)
        return batch

    async def list(self, *, limit: int, after: str | None) -> tuple[list[Batch], bool]:
        return await self._store.list_batches(limit=limit, after=after)

    async def cancel(self, batch_id: str) -> Batch:
        """``cancelling`` until its running lines end (then ``cancelled``, keeping what finished)."""
        batch = await self._store.request_cancel(batch_id, int(time.time()))
        if batch is None:
            raise _not_found(batch_id)
        if batch.status in BATCH_TERMINAL_STATUSES and batch.status != "cancelled":
            raise Conflict(
                f"Cannot cancel a batch that is already {batch.status}.", param="batch_id", code="batch_not_cancellable"
            )
        self._woken()
        return batch
