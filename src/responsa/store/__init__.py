"""Durable storage of responses and items."""

from ._base import (
    ConversationRepository,
    FileRepository,
    ItemPage,
    LoggedEvent,
    Order,
    ResponseFilter,
    ResponsePage,
    ResponseRepository,
    Retention,
    Store,
)
from ._chunks import ChunkHit
from ._containers import ContainerRepository
from ._faults import StoreHealth
from ._files import PART_BYTES
from ._sql import SqlStore, schema_state
from ._vector_store_repository import VectorStoreRepository
from ._vector_stores import StoredBatch, StoredFile, StoredVectorStore

__all__ = [
    "PART_BYTES",
    "ChunkHit",
    "ContainerRepository",
    "ConversationRepository",
    "FileRepository",
    "ItemPage",
    "LoggedEvent",
    "Order",
    "ResponseFilter",
    "ResponsePage",
    "ResponseRepository",
    "Retention",
    "SqlStore",
    "Store",
    "StoreHealth",
    "StoredBatch",
    "StoredFile",
    "StoredVectorStore",
    "VectorStoreRepository",
    "schema_state",
]
