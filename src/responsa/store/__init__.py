"""Durable storage of responses and items."""

from ._base import FileStore, ItemPage, LoggedEvent, Order, ResponseFilter, ResponsePage, Retention, Store
from ._chunks import ChunkHit
from ._files import PART_BYTES
from ._sql import SqlStore
from ._vector_stores import StoredBatch, StoredFile, StoredVectorStore

__all__ = [
    "PART_BYTES",
    "ChunkHit",
    "FileStore",
    "ItemPage",
    "LoggedEvent",
    "Order",
    "ResponseFilter",
    "ResponsePage",
    "Retention",
    "SqlStore",
    "Store",
    "StoredBatch",
    "StoredFile",
    "StoredVectorStore",
]
