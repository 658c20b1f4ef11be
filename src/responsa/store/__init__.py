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
from ._batch_repository import BatchFile, BatchRepository, ClaimedBatch, ClaimedLine, InputLine
from ._container_repository import ContainerRepository
from ._project_repository import (
    AuditFilter,
    AuditRow,
    KeyRow,
    ProjectRepository,
    ProjectRow,
    ServiceAccountRow,
    SpendAlertRow,
)
from ._skill_repository import SkillRepository, SkillRow, SkillVersionRow
from ._usage_repository import USAGE_DIMENSIONS, USAGE_TOTALS, UsageFilter, UsageRepository, UsageRow
from ._vector_store_repository import ChunkHit, StoredBatch, StoredFile, StoredVectorStore, VectorStoreRepository
from ._webhook_repository import Delivery, DueDelivery, WebhookEndpointRow, WebhookRepository, event_payload, secrets_of
from .sql import SqlStore, schema_state

__all__ = [
    "PART_BYTES",
    "USAGE_DIMENSIONS",
    "USAGE_TOTALS",
    "AuditFilter",
    "AuditRow",
    "BatchFile",
    "BatchRepository",
    "ChunkHit",
    "ClaimedBatch",
    "ClaimedLine",
    "ContainerRepository",
    "ConversationRepository",
    "Delivery",
    "DueDelivery",
    "FileRepository",
    "InputLine",
    "ItemPage",
    "KeyRow",
    "LoggedEvent",
    "Order",
    "ProjectRepository",
    "ProjectRow",
    "ResponseFilter",
    "ResponsePage",
    "ResponseRepository",
    "Retention",
    "ServiceAccountRow",
    "SkillRepository",
    "SkillRow",
    "SkillVersionRow",
    "SpendAlertRow",
    "SqlStore",
    "Store",
    "StoreHealth",
    "StoredBatch",
    "StoredFile",
    "StoredVectorStore",
    "UsageFilter",
    "UsageRepository",
    "UsageRow",
    "VectorStoreRepository",
    "WebhookEndpointRow",
    "WebhookRepository",
    "event_payload",
    "schema_state",
    "secrets_of",
]
