"""The vector-store repository: stores, their files and batches, chunks and vectors, for one tenant."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from ._base import Order

__all__ = ["ChunkHit", "StoredBatch", "StoredFile", "StoredVectorStore", "VectorStoreRepository"]


@dataclass(frozen=True)
class StoredVectorStore:
    id: str
    created_at: int
    name: str
    metadata: dict[str, str]
    expires_after_days: int | None
    last_active_at: int
    counts: dict[str, int]
    usage_bytes: int


@dataclass(frozen=True)
class StoredFile:
    vector_store_id: str
    file_id: str
    created_at: int
    status: str
    last_error: dict[str, str] | None
    attributes: dict[str, Any] | None
    chunking: dict[str, Any]
    usage_bytes: int


@dataclass(frozen=True)
class StoredBatch:
    id: str
    vector_store_id: str
    created_at: int
    cancelled: bool
    counts: dict[str, int]


@dataclass(frozen=True)
class ChunkHit:
    chunk_id: int
    file_id: str
    text: str
    score: float
    """0 to 1: the keyword rank r (BM25 on SQLite, ts_rank on PostgreSQL) as r / (r + 1)."""


class VectorStoreRepository(Protocol):
    """Vector stores of ``tenant`` (``scoped`` makes the view of another), their files as they are
    ingested (chunks, vectors), and file batches."""

    tenant: str

    def scoped(self, tenant: str) -> VectorStoreRepository: ...

    async def bytes_by_tenant(self) -> dict[str, int]:
        """What every tenant's vector stores hold now (their files' chunks), in bytes, by tenant."""
        ...

    async def create_vector_store(
        self, vector_store_id: str, name: str, metadata: dict[str, str], expires_after_days: int | None
    ) -> None: ...

    async def has_vector_store(self, vector_store_id: str) -> bool: ...

    async def get_vector_store(self, vector_store_id: str) -> StoredVectorStore | None: ...

    async def list_vector_stores(
        self, *, limit: int, order: Order, after: str | None, before: str | None
    ) -> tuple[list[StoredVectorStore], bool]: ...

    async def update_vector_store(self, vector_store_id: str, changes: dict[str, Any]) -> bool: ...

    async def delete_vector_store(self, vector_store_id: str) -> bool: ...

    async def touch_vector_store(self, vector_store_id: str) -> None:
        """It was used now (its ``last_active_at``)."""

    async def add_vector_store_file(
        self,
        vector_store_id: str,
        file_id: str,
        attributes: dict[str, Any] | None,
        chunking: dict[str, Any],
        batch_id: str | None = None,
    ) -> StoredFile: ...

    async def get_vector_store_file(self, vector_store_id: str, file_id: str) -> StoredFile | None: ...

    async def list_vector_store_files(
        self,
        vector_store_id: str,
        *,
        status: str | None,
        limit: int,
        order: Order,
        after: str | None,
        before: str | None,
        batch_id: str | None = None,
    ) -> tuple[list[StoredFile], bool]: ...

    async def update_vector_store_file(
        self, vector_store_id: str, file_id: str, attributes: dict[str, Any]
    ) -> bool: ...

    async def remove_vector_store_file(self, vector_store_id: str, file_id: str) -> bool: ...

    async def finish_ingestion(
        self,
        vector_store_id: str,
        file_id: str,
        texts: Sequence[str],
        error: dict[str, str] | None,
        vectors: Sequence[bytes] = (),
    ) -> bool:
        """Store a file's chunks (and their vectors) and its final status; False when it went meanwhile."""

    async def unfinished_ingestions(self) -> list[tuple[str, str]]:
        """(vector store, file) of every file still waiting to be ingested, in every tenant."""

    async def create_batch(self, batch_id: str, vector_store_id: str) -> None: ...

    async def get_batch(self, vector_store_id: str, batch_id: str) -> StoredBatch | None: ...

    async def cancel_batch(self, vector_store_id: str, batch_id: str) -> None: ...

    async def search_chunks(self, vector_store_id: str, query: str, limit: int) -> list[ChunkHit]:
        """The best ``limit`` chunks for ``query``'s words, best first."""

    async def searchable_files(
        self, vector_store_id: str, file_ids: Sequence[str]
    ) -> dict[str, tuple[str, dict[str, Any] | None]]:
        """Name and attributes of each of ``file_ids`` that is ingested in the store."""

    async def vector_fingerprint(self, vector_store_id: str) -> tuple[int, int]:
        """(how many vectors, the newest chunk id): changes whenever the store's vectors do."""

    async def load_vectors(self, vector_store_id: str) -> list[tuple[int, bytes]]: ...

    async def chunks_by_id(self, chunk_ids: Sequence[int]) -> dict[int, tuple[str, str]]:
        """(file id, text) of each chunk that still exists."""
