"""The vector store service: stores of files, ingestion in the background (extract, chunk, index),
and keyword search over the chunks on the store's own full-text index."""

from __future__ import annotations

import logging
import time
from dataclasses import asdict
from typing import Any

import anyio
import anyio.abc
import anyio.to_thread

from responsa.protocol import (
    ChunkingStrategy,
    CreateFileBatchRequest,
    CreateVectorStoreFileRequest,
    CreateVectorStoreRequest,
    FileCounts,
    InvalidRequest,
    NotFound,
    SearchContent,
    SearchVectorStoreRequest,
    UpdateVectorStoreRequest,
    VectorStoreExpiry,
    VectorStoreFileBatchObject,
    VectorStoreFileObject,
    VectorStoreObject,
    VectorStoreSearchPage,
    VectorStoreSearchResult,
    new_id,
)
from responsa.store import ChunkHit, Order, StoredBatch, StoredFile, StoredVectorStore, VectorStoreRepository

from .._tenant_views import tenant_view
from ._attribute_filters import check_filter, matches
from ._documents import DEFAULT_CHUNKING, Chunking, UnsupportedFile, chunk_text, extract_text
from ._files import FileService
from ._vector_index import Embedder, VectorIndex, fuse, pack

__all__ = ["VectorStoreService"]

logger = logging.getLogger(__name__)

_DAY = 86400
_EMBED_BATCH = 64
_TOUCH_EVERY = 60.0
_CANDIDATES = 200
"""Chunks read per vector store before attribute filters and the score threshold are applied."""


def _not_found(vector_store_id: str) -> NotFound:
    return NotFound(f"No vector store found with id '{vector_store_id}'.", param="vector_store_id")


def _chunking(strategy: ChunkingStrategy | None) -> Chunking:
    if strategy is None or strategy.type == "auto" or strategy.static is None:
        return DEFAULT_CHUNKING
    return Chunking(strategy.static.max_chunk_size_tokens, strategy.static.chunk_overlap_tokens)


def _chunking_body(chunking: dict[str, Any]) -> dict[str, Any]:
    return {"type": "static", "static": chunking}


def vector_store_body(stored: StoredVectorStore, now: float) -> VectorStoreObject:
    counts = FileCounts.of(stored.counts)
    expires_at = stored.last_active_at + stored.expires_after_days * _DAY if stored.expires_after_days else None
    status = "expired" if expires_at and expires_at <= now else "in_progress" if counts.in_progress else "completed"
    expiry = (
        VectorStoreExpiry(anchor="last_active_at", days=stored.expires_after_days)
        if stored.expires_after_days
        else None
    )
    return VectorStoreObject(
        id=stored.id, created_at=stored.created_at, name=stored.name, usage_bytes=stored.usage_bytes,
        file_counts=counts, status=status, expires_after=expiry, expires_at=expires_at,
        last_active_at=stored.last_active_at, metadata=stored.metadata,
    )  # fmt: skip


def batch_body(stored: StoredBatch) -> VectorStoreFileBatchObject:
    counts = FileCounts.of(stored.counts)
    status = "cancelled" if stored.cancelled else "in_progress" if counts.in_progress else "completed"
    return VectorStoreFileBatchObject(
        id=stored.id,
        created_at=stored.created_at,
        vector_store_id=stored.vector_store_id,
        status=status,
        file_counts=counts,
    )


def file_body(stored: StoredFile) -> VectorStoreFileObject:
    return VectorStoreFileObject.model_validate({
        "id": stored.file_id, "created_at": stored.created_at, "vector_store_id": stored.vector_store_id,
        "status": stored.status, "last_error": stored.last_error, "usage_bytes": stored.usage_bytes,
        "attributes": stored.attributes, "chunking_strategy": _chunking_body(stored.chunking),
    })  # fmt: skip


class VectorStoreService:
    def __init__(
        self,
        store: VectorStoreRepository,
        files: FileService,
        tasks: anyio.abc.TaskGroup,
        embed: Embedder | None = None,
        index: VectorIndex | None = None,
    ) -> None:
        """``embed``: the embedding model's, for hybrid search; without one, search is by keywords."""
        self._store = store
        self._files = files
        self._tasks = tasks
        self._embed = embed
        self._index = index or VectorIndex()
        self._touched: dict[str, float] = {}
        self._views: dict[str, VectorStoreService] = {}

    def for_tenant(self, tenant: str) -> VectorStoreService:
        return tenant_view(self._views, tenant, self._view)

    def _view(self, tenant: str) -> VectorStoreService:
        scoped = self._store.scoped(tenant)
        view = VectorStoreService(scoped, self._files.for_tenant(tenant), self._tasks, self._embed, self._index)
        view._touched = self._touched
        return view

    async def create(self, request: CreateVectorStoreRequest) -> StoredVectorStore:
        for file_id in request.file_ids:
            await self._files.get(file_id)  # 404 before anything is created
        vector_store_id = new_id("vs")
        days = request.expires_after.days if request.expires_after else None
        await self._store.create_vector_store(vector_store_id, request.name, request.metadata or {}, days)
        for file_id in request.file_ids:
            await self._attach(vector_store_id, file_id, None, request.chunking_strategy)
        return await self.get(vector_store_id)

    async def exists(self, vector_store_id: str) -> bool:
        return await self._store.has_vector_store(vector_store_id)

    async def _check(self, vector_store_id: str) -> None:
        """404 unless the caller has this store (without counting its files, as ``get`` does)."""
        if not await self.exists(vector_store_id):
            raise _not_found(vector_store_id)

    async def get(self, vector_store_id: str) -> StoredVectorStore:
        stored = await self._store.get_vector_store(vector_store_id)
        if stored is None:
            raise _not_found(vector_store_id)
        return stored

    async def page(
        self, *, limit: int, order: Order, after: str | None, before: str | None
    ) -> tuple[list[StoredVectorStore], bool]:
        return await self._store.list_vector_stores(limit=limit, order=order, after=after, before=before)

    async def update(self, vector_store_id: str, request: UpdateVectorStoreRequest) -> StoredVectorStore:
        changes: dict[str, Any] = {}
        if request.name is not None:
            changes["name"] = request.name
        if request.metadata is not None:
            changes["metadata"] = request.metadata
        if "expires_after" in request.model_fields_set:
            changes["expires_after_days"] = request.expires_after.days if request.expires_after else None
        if not await self._store.update_vector_store(vector_store_id, changes):
            raise _not_found(vector_store_id)
        return await self.get(vector_store_id)

    async def delete(self, vector_store_id: str) -> None:
        if not await self._store.delete_vector_store(vector_store_id):
            raise _not_found(vector_store_id)

    async def add_file(self, vector_store_id: str, request: CreateVectorStoreFileRequest) -> StoredFile:
        await self._check(vector_store_id)
        await self._files.get(request.file_id)
        return await self._attach(vector_store_id, request.file_id, request.attributes, request.chunking_strategy)

    async def add_batch(self, vector_store_id: str, request: CreateFileBatchRequest) -> StoredBatch:
        """Attach several files at once; the batch reports on them together."""
        await self._check(vector_store_id)
        entries = request.entries()
        for entry in entries:
            await self._files.get(entry.file_id)
        batch_id = new_id("vsfb")
        await self._store.create_batch(batch_id, vector_store_id)
        for entry in entries:
            await self._attach(vector_store_id, entry.file_id, entry.attributes, entry.chunking_strategy, batch_id)
        return await self.batch(vector_store_id, batch_id)

    async def batch(self, vector_store_id: str, batch_id: str) -> StoredBatch:
        await self._check(vector_store_id)
        stored = await self._store.get_batch(vector_store_id, batch_id)
        if stored is None:
            raise NotFound(f"No file batch found with id '{batch_id}'.", param="batch_id")
        return stored

    async def cancel_batch(self, vector_store_id: str, batch_id: str) -> StoredBatch:
        await self.batch(vector_store_id, batch_id)
        await self._store.cancel_batch(vector_store_id, batch_id)
        return await self.batch(vector_store_id, batch_id)

    async def _attach(
        self,
        vector_store_id: str,
        file_id: str,
        attributes: dict[str, Any] | None,
        strategy: ChunkingStrategy | None,
        batch_id: str | None = None,
    ) -> StoredFile:
        chunking = _chunking(strategy)
        stored = await self._store.add_vector_store_file(
            vector_store_id, file_id, attributes, asdict(chunking), batch_id
        )
        self._tasks.start_soon(self._ingest, vector_store_id, file_id, chunking)
        return stored

    async def file(self, vector_store_id: str, file_id: str) -> StoredFile:
        await self._check(vector_store_id)
        stored = await self._store.get_vector_store_file(vector_store_id, file_id)
        if stored is None:
            raise NotFound(f"No file found with id '{file_id}' in vector store '{vector_store_id}'.", param="file_id")
        return stored

    async def files(
        self, vector_store_id: str, *, status: str | None, limit: int, order: Order, after: str | None,
        before: str | None, batch_id: str | None = None,
    ) -> tuple[list[StoredFile], bool]:  # fmt: skip
        if batch_id is not None:
            await self.batch(vector_store_id, batch_id)
        else:
            await self._check(vector_store_id)
        return await self._store.list_vector_store_files(
            vector_store_id, status=status, limit=limit, order=order, after=after, before=before, batch_id=batch_id
        )

    async def update_file(self, vector_store_id: str, file_id: str, attributes: dict[str, Any]) -> StoredFile:
        await self.file(vector_store_id, file_id)
        await self._store.update_vector_store_file(vector_store_id, file_id, attributes)
        return await self.file(vector_store_id, file_id)

    async def remove_file(self, vector_store_id: str, file_id: str) -> None:
        await self.file(vector_store_id, file_id)
        await self._store.remove_vector_store_file(vector_store_id, file_id)

    async def search(self, vector_store_id: str, request: SearchVectorStoreRequest) -> VectorStoreSearchPage:
        """The best chunks for the query, as OpenAI's ``vector_store.search_results.page``."""
        await self._check(vector_store_id)
        if request.filters is not None:
            check_filter(request.filters)
        queries = [request.query] if isinstance(request.query, str) else request.query
        if not any(query.strip() for query in queries):
            raise InvalidRequest("'query' must not be empty.", param="query")
        threshold = request.ranking_options.score_threshold if request.ranking_options else 0.0
        # Filters and a threshold drop hits after ranking: read more candidates for them.
        narrowing = request.filters is not None or threshold > 0
        candidates = _CANDIDATES if narrowing else max(50, 5 * request.max_num_results)
        hits = await self._ranked(vector_store_id, " ".join(queries), candidates)
        files = await self._store.searchable_files(vector_store_id, sorted({hit.file_id for hit in hits}))
        data: list[VectorStoreSearchResult] = []
        for hit in hits:
            if hit.score < threshold or hit.file_id not in files:
                continue
            filename, attributes = files[hit.file_id]
            if request.filters is not None and not matches(request.filters, attributes or {}):
                continue
            content = [SearchContent(text=hit.text)]
            score = round(hit.score, 6)
            data.append(VectorStoreSearchResult(file_id=hit.file_id, filename=filename, score=score,
                                                attributes=attributes, content=content))  # fmt: skip
            if len(data) == request.max_num_results:
                break
        await self._touch(vector_store_id)
        return VectorStoreSearchPage(search_query=queries, data=data)

    async def _touch(self, vector_store_id: str) -> None:
        """Mark the store active (its expiry counts from then), writing at most once a minute per store."""
        now = time.monotonic()
        if now - self._touched.get(vector_store_id, -_TOUCH_EVERY) >= _TOUCH_EVERY:
            self._touched[vector_store_id] = now
            await self._store.touch_vector_store(vector_store_id)

    async def _ranked(self, vector_store_id: str, query: str, candidates: int) -> list[ChunkHit]:
        """Keyword hits; with an embedding model, fused with the nearest chunks by vector."""
        keyword = await self._store.search_chunks(vector_store_id, query, candidates)
        if self._embed is None:
            return keyword
        [wanted] = await self._embed([query])
        nearest = await self._index.nearest(self._store, vector_store_id, wanted, candidates)
        known = {hit.chunk_id: hit for hit in keyword}
        fused = fuse([hit.chunk_id for hit in keyword], nearest)
        texts = await self._store.chunks_by_id([chunk_id for chunk_id, _score in fused if chunk_id not in known])
        hits = []
        for chunk_id, score in fused:
            found = known.get(chunk_id)
            file_id, text = (found.file_id, found.text) if found else texts.get(chunk_id, ("", ""))
            if file_id:
                hits.append(ChunkHit(chunk_id, file_id, text, score))
        return hits

    async def recover(self) -> None:
        """Ingest again what a process stopped in the middle of (it left the file in_progress)."""
        for vector_store_id, file_id in await self._store.unfinished_ingestions():
            stored = await self._store.get_vector_store_file(vector_store_id, file_id)
            if stored is not None:
                chunking = Chunking(**stored.chunking)
                self._tasks.start_soon(self._ingest, vector_store_id, file_id, chunking)

    async def _ingest(self, vector_store_id: str, file_id: str, chunking: Chunking) -> None:
        error: dict[str, str] | None = None
        texts: list[str] = []
        vectors: list[bytes] = []
        try:
            data = b"".join([part async for part in self._files.parts(file_id)])
            name = await self._files.name(file_id)
            text = await anyio.to_thread.run_sync(extract_text, name, data)
            texts = await anyio.to_thread.run_sync(chunk_text, text, chunking)
            vectors = await self._vectors(texts)
        except UnsupportedFile as exc:
            error = {"code": "unsupported_file", "message": str(exc)}
        except Exception as exc:  # the file stays failed, not in_progress for ever
            logger.exception("ingesting %s into %s failed", file_id, vector_store_id)
            error = {"code": "server_error", "message": f"Ingestion failed: {exc}"}
        if error:
            texts, vectors = [], []
        await self._store.finish_ingestion(vector_store_id, file_id, texts, error, vectors)

    async def _vectors(self, texts: list[str]) -> list[bytes]:
        """The chunks' embeddings, in batches, when an embedding model is configured."""
        if self._embed is None:
            return []
        vectors: list[bytes] = []
        for start in range(0, len(texts), _EMBED_BATCH):
            vectors += [pack(vector) for vector in await self._embed(texts[start : start + _EMBED_BATCH])]
        return vectors
