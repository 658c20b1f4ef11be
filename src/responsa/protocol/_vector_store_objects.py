"""The objects ``/v1/vector_stores`` answers with (OpenAI's ``VectorStore``, ``VectorStoreFile`` and
``VectorStoreFileBatch``); checked against the openai SDK's types in tests/protocol."""

from __future__ import annotations

from typing import Any, Literal

from ._base import WireModel
from ._vector_stores import VectorStoreExpiry

__all__ = [
    "FileCounts",
    "SearchContent",
    "VectorStoreFileBatchObject",
    "VectorStoreFileObject",
    "VectorStoreObject",
    "VectorStoreSearchPage",
    "VectorStoreSearchResult",
]


class FileCounts(WireModel):
    in_progress: int = 0
    completed: int = 0
    failed: int = 0
    cancelled: int = 0
    total: int = 0

    @classmethod
    def of(cls, counts: dict[str, int]) -> FileCounts:
        """From the count of files in each status; the total is their sum."""
        return cls(**counts, total=sum(counts.values()))


class VectorStoreObject(WireModel):
    id: str
    object: Literal["vector_store"] = "vector_store"
    created_at: int
    name: str
    usage_bytes: int
    file_counts: FileCounts
    status: Literal["expired", "in_progress", "completed"]
    expires_after: VectorStoreExpiry | None = None
    expires_at: int | None = None
    last_active_at: int | None = None
    metadata: dict[str, str] | None = None


class VectorStoreFileObject(WireModel):
    id: str
    object: Literal["vector_store.file"] = "vector_store.file"
    created_at: int
    vector_store_id: str
    status: Literal["in_progress", "completed", "cancelled", "failed"]
    last_error: dict[str, str] | None = None
    usage_bytes: int
    attributes: dict[str, Any] | None = None
    chunking_strategy: dict[str, Any] | None = None


class VectorStoreFileBatchObject(WireModel):
    id: str
    object: Literal["vector_store.files_batch"] = "vector_store.files_batch"
    created_at: int
    vector_store_id: str
    status: Literal["in_progress", "completed", "cancelled", "failed"]
    file_counts: FileCounts


class SearchContent(WireModel):
    type: Literal["text"] = "text"
    text: str


class VectorStoreSearchResult(WireModel):
    file_id: str
    filename: str
    score: float
    attributes: dict[str, Any] | None = None
    content: list[SearchContent]


class VectorStoreSearchPage(WireModel):
    object: Literal["vector_store.search_results.page"] = "vector_store.search_results.page"
    search_query: list[str]
    data: list[VectorStoreSearchResult]
    has_more: bool = False
    next_page: str | None = None
