"""Vector stores: request bodies of ``/v1/vector_stores`` (the objects are built by the engine)."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field, model_validator

from ._base import WireModel
from ._metadata import Metadata

__all__ = [
    "ChunkingStrategy",
    "CreateFileBatchRequest",
    "CreateVectorStoreFileRequest",
    "CreateVectorStoreRequest",
    "SearchVectorStoreRequest",
    "StaticChunking",
    "UpdateVectorStoreFileRequest",
    "UpdateVectorStoreRequest",
    "VectorStoreExpiry",
]

Attributes = dict[str, str | float | bool]


class StaticChunking(WireModel):
    max_chunk_size_tokens: int = Field(ge=100, le=4096)
    chunk_overlap_tokens: int = Field(ge=0)

    @model_validator(mode="after")
    def _overlap_at_most_half(self) -> StaticChunking:
        if self.chunk_overlap_tokens > self.max_chunk_size_tokens // 2:
            raise ValueError("chunk_overlap_tokens must not exceed half of max_chunk_size_tokens")
        return self


class ChunkingStrategy(WireModel):
    type: Literal["auto", "static"]
    static: StaticChunking | None = None

    @model_validator(mode="after")
    def _static_has_settings(self) -> ChunkingStrategy:
        if self.type == "static" and self.static is None:
            raise ValueError("a static chunking_strategy needs 'static'")
        return self


class VectorStoreExpiry(WireModel):
    anchor: Literal["last_active_at"]
    days: int = Field(ge=1, le=365)


class CreateVectorStoreRequest(WireModel):
    name: str = ""
    description: str | None = None
    metadata: Metadata | None = None
    expires_after: VectorStoreExpiry | None = None
    file_ids: list[str] = Field(default_factory=list, max_length=500)
    chunking_strategy: ChunkingStrategy | None = None


class UpdateVectorStoreRequest(WireModel):
    name: str | None = None
    metadata: Metadata | None = None
    expires_after: VectorStoreExpiry | None = None


class CreateVectorStoreFileRequest(WireModel):
    file_id: str
    attributes: Attributes | None = Field(default=None, max_length=16)
    chunking_strategy: ChunkingStrategy | None = None


class CreateFileBatchRequest(WireModel):
    """``file_ids`` (each with the batch's ``attributes`` and ``chunking_strategy``), or ``files``
    with their own."""

    file_ids: list[str] = Field(default_factory=list, max_length=500)
    files: list[CreateVectorStoreFileRequest] = Field(default_factory=list, max_length=500)
    attributes: Attributes | None = Field(default=None, max_length=16)
    chunking_strategy: ChunkingStrategy | None = None

    @model_validator(mode="after")
    def _one_list(self) -> CreateFileBatchRequest:
        if bool(self.file_ids) == bool(self.files):
            raise ValueError("give either 'file_ids' or 'files', not both or neither")
        return self

    def entries(self) -> list[CreateVectorStoreFileRequest]:
        """Every file of the batch with its attributes and chunking."""
        if self.files:
            return self.files
        return [
            CreateVectorStoreFileRequest(
                file_id=file_id, attributes=self.attributes, chunking_strategy=self.chunking_strategy
            )
            for file_id in self.file_ids
        ]


class UpdateVectorStoreFileRequest(WireModel):
    attributes: Attributes | None = Field(default=None, max_length=16)


class RankingOptions(WireModel):
    ranker: str | None = None
    score_threshold: float = Field(default=0.0, ge=0, le=1)


class SearchVectorStoreRequest(WireModel):
    query: str | list[str]
    max_num_results: int = Field(default=10, ge=1, le=50)
    filters: dict[str, Any] | None = None
    ranking_options: RankingOptions | None = None
    rewrite_query: bool = False
