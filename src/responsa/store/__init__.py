"""Durable storage: the repositories the engine reaches, as protocols, and the values they hold
(this package), and their SQL implementation over SQLite and PostgreSQL (``store/sql/``)."""

from ._base import (
    PART_BYTES,
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
    StoreHealth,
)
from ._container_repository import ContainerRepository
from ._vector_store_repository import ChunkHit, StoredBatch, StoredFile, StoredVectorStore, VectorStoreRepository
from .sql import SqlStore, schema_state

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
