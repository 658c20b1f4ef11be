"""Table definitions (SQLAlchemy Core); the migrations create exactly these."""

from __future__ import annotations

from sqlalchemy import (
    BigInteger,
    Boolean,
    Column,
    Float,
    Index,
    Integer,
    LargeBinary,
    MetaData,
    String,
    Table,
    Text,
    false,
)

__all__ = [
    "SCHEMA_VERSION",
    "batch_lines",
    "batches",
    "cancel_asks",
    "chunk_vectors",
    "chunks",
    "container_file_parts",
    "container_files",
    "container_skill_files",
    "containers",
    "conversation_items",
    "conversations",
    "file_parts",
    "files",
    "metadata",
    "response_events",
    "response_items",
    "response_removals",
    "responses",
    "skill_versions",
    "skills",
    "store_probe",
    "vector_store_file_batches",
    "vector_store_files",
    "vector_stores",
    "webhook_deliveries",
    "webhook_endpoints",
]

SCHEMA_VERSION = "0023"
"""The newest migration's revision (a test keeps the two equal): a store already there skips Alembic."""

metadata = MetaData()

responses = Table(
    "responses",
    metadata,
    Column("id", String(80), primary_key=True),
    Column("created_at", BigInteger, nullable=False),
    Column("status", String(20), nullable=False),
    Column("previous_response_id", String(80), nullable=True),
    # The response object without ``output`` (which lives in response_items), as JSON.
    Column("body", Text, nullable=False),
    # Seconds since the epoch with sub-second precision: orders responses for retention.
    Column("stored_at", Float, nullable=False, server_default="0"),
    Column("conversation_id", String(80), nullable=True),
    Column("background", Boolean, nullable=False, server_default=false()),
    # Until when the process running an unfinished response vouches for it; past it, it is orphaned.
    Column("lease_until", Float, nullable=True),
    # Set by whichever process receives POST .../cancel; the process running the response acts on it.
    Column("cancel_requested", Boolean, nullable=False, server_default=false()),
    # The API key's tenant that created it; other tenants never see it.
    Column("tenant", String(80), nullable=False, server_default="default"),
    # Its timing record (JSON list of marks), written with its final state.
    Column("timing", Text, nullable=True),
)
Index("ix_responses_stored_at", responses.c.stored_at)
Index("ix_responses_background_status", responses.c.background, responses.c.status)

response_events = Table(
    "response_events",
    metadata,
    Column("response_id", String(80), primary_key=True),
    Column("sequence_number", Integer, primary_key=True),
    Column("type", String(80), nullable=False),
    # The event's JSON exactly as streamed.
    Column("body", Text, nullable=False),
)

response_items = Table(
    "response_items",
    metadata,
    Column("response_id", String(80), primary_key=True),
    # "input" or "output": inputs sort before outputs within a response.
    Column("role", String(8), primary_key=True),
    Column("position", Integer, primary_key=True),
    Column("item_id", String(128), nullable=True),
    Column("body", Text, nullable=False),
)
Index("ix_response_items_item_id", response_items.c.item_id)

conversations = Table(
    "conversations",
    metadata,
    Column("id", String(80), primary_key=True),
    Column("created_at", BigInteger, nullable=False),
    Column("stored_at", Float, nullable=False),
    Column("metadata", Text, nullable=False),
    Column("tenant", String(80), nullable=False, server_default="default"),
    # Kept by the database (a trigger on conversation_items, migration 0011): see load_conversation.
    Column("items_removed", BigInteger, nullable=False, server_default="0"),
)
Index("ix_conversations_stored_at", conversations.c.stored_at)

conversation_items = Table(
    "conversation_items",
    metadata,
    Column("conversation_id", String(80), primary_key=True),
    Column("position", Integer, primary_key=True),
    Column("item_id", String(128), nullable=True),
    Column("body", Text, nullable=False),
)
Index("ix_conversation_items_item", conversation_items.c.conversation_id, conversation_items.c.item_id)
Index("ix_conversation_items_item_id", conversation_items.c.item_id)

files = Table(
    "files",
    metadata,
    Column("id", String(80), primary_key=True),
    Column("tenant", String(80), nullable=False),
    Column("created_at", BigInteger, nullable=False),
    Column("expires_at", BigInteger, nullable=True),
    Column("purpose", String(40), nullable=False),
    Column("filename", Text, nullable=False),
    Column("bytes", BigInteger, nullable=False),
    Column("sha256", String(64), nullable=False),
)
Index("ix_files_tenant_id", files.c.tenant, files.c.id)

file_parts = Table(
    "file_parts",
    metadata,
    # Written before the file's row, which is the commit point of an upload: parts without one are
    # an upload in progress or abandoned, never listed, and removed by the sweep.
    Column("file_id", String(80), primary_key=True),
    Column("position", Integer, primary_key=True),
    Column("data", LargeBinary, nullable=False),
    Column("written_at", Float, nullable=False),
)

vector_stores = Table(
    "vector_stores",
    metadata,
    Column("id", String(80), primary_key=True),
    Column("tenant", String(80), nullable=False),
    Column("created_at", BigInteger, nullable=False),
    Column("name", Text, nullable=False),
    Column("metadata", Text, nullable=False),
    Column("expires_after_days", Integer, nullable=True),
    Column("last_active_at", BigInteger, nullable=False),
)
Index("ix_vector_stores_tenant_id", vector_stores.c.tenant, vector_stores.c.id)

vector_store_files = Table(
    "vector_store_files",
    metadata,
    Column("vector_store_id", String(80), primary_key=True),
    Column("file_id", String(80), primary_key=True),
    Column("created_at", BigInteger, nullable=False),
    Column("status", String(20), nullable=False),
    Column("last_error", Text, nullable=True),
    Column("attributes", Text, nullable=True),
    Column("chunking", Text, nullable=False),
    Column("usage_bytes", BigInteger, nullable=False, server_default="0"),
    Column("batch_id", String(80), nullable=True),
)
Index("ix_vector_store_files_file", vector_store_files.c.file_id)

vector_store_file_batches = Table(
    "vector_store_file_batches",
    metadata,
    Column("id", String(80), primary_key=True),
    Column("vector_store_id", String(80), nullable=False),
    Column("created_at", BigInteger, nullable=False),
    Column("cancelled", Boolean, nullable=False, server_default=false()),
)

chunks = Table(
    "chunks",
    metadata,
    # Indexed for keyword search: on SQLite by the FTS5 table chunks_fts (external content, rowid = id),
    # on PostgreSQL by the generated tsvector column tsv and its GIN index (both made by migration 0008).
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("vector_store_id", String(80), nullable=False),
    Column("file_id", String(80), nullable=False),
    Column("position", Integer, nullable=False),
    Column("text", Text, nullable=False),
)
Index("ix_chunks_store_file", chunks.c.vector_store_id, chunks.c.file_id)

chunk_vectors = Table(
    "chunk_vectors",
    metadata,
    # A chunk's embedding (float32, little-endian) when an embedding model is configured.
    Column("chunk_id", Integer, primary_key=True),
    Column("vector_store_id", String(80), nullable=False),
    Column("vector", LargeBinary, nullable=False),
)
Index("ix_chunk_vectors_store", chunk_vectors.c.vector_store_id, chunk_vectors.c.chunk_id)

containers = Table(
    "containers",
    metadata,
    Column("id", String(80), primary_key=True),
    Column("tenant", String(80), nullable=False),
    Column("name", Text, nullable=False),
    Column("created_at", BigInteger, nullable=False),
    Column("last_active_at", BigInteger, nullable=False),
    Column("expires_after_minutes", Integer, nullable=False),
    Column("memory_limit", String(8), nullable=False),
    # running, then expired (idle past its minutes: its files and sandbox are gone).
    Column("status", String(20), nullable=False),
    # The process whose Python holds its state (migration 0013); None before any code ran.
    Column("python", String(120), nullable=True),
    # Its network policy as JSON (migration 0018); None: disabled.
    Column("network_policy", Text, nullable=True),
)
Index("ix_containers_tenant_id", containers.c.tenant, containers.c.id)

container_files = Table(
    "container_files",
    metadata,
    # The bytes live in the container's directory on the machine that runs it; the rows list them.
    Column("id", String(80), primary_key=True),
    Column("container_id", String(80), nullable=False),
    Column("path", Text, nullable=False),
    Column("bytes", BigInteger, nullable=False),
    Column("source", String(20), nullable=False),
    Column("created_at", BigInteger, nullable=False),
)
Index("ix_container_files_container", container_files.c.container_id, container_files.c.id)

container_file_parts = Table(
    "container_file_parts",
    metadata,
    # A container file's bytes (migration 0014), replaced whole when the file changes.
    Column("file_id", String(80), primary_key=True),
    Column("position", Integer, primary_key=True),
    Column("container_id", String(80), nullable=False),
    Column("data", LargeBinary, nullable=False),
)
Index("ix_container_file_parts_container", container_file_parts.c.container_id)

store_probe = Table(
    "store_probe",
    metadata,
    # The health check writes (and deletes) a row here to learn whether the store takes writes again.
    Column("id", String(80), primary_key=True),
    Column("written_at", Float, nullable=False),
    Column("pad", Text, nullable=False),
)

response_removals = Table(
    "response_removals",
    metadata,
    # One row (id 1): how many responses have ever been removed, counted by the database itself
    # (a trigger, migration 0012); a process's context cache is good while it has not changed.
    Column("id", Integer, primary_key=True),
    Column("removed", BigInteger, nullable=False, server_default="0"),
)

cancel_asks = Table(
    "cancel_asks",
    metadata,
    # One row (id 1): how many cancels have ever been asked for, counted by the database (a trigger,
    # migration 0016); a process looks for the cancels of its responses only when it has changed.
    Column("id", Integer, primary_key=True),
    Column("asked", BigInteger, nullable=False, server_default="0"),
)

batches = Table(
    "batches",
    metadata,
    # A batch (migration 0015): its object as JSON without its counts (the lines' states are counted).
    Column("id", String(80), primary_key=True),
    Column("tenant", String(80), nullable=False),
    Column("status", String(20), nullable=False),
    Column("body", Text, nullable=False),
    Column("expires_at", BigInteger, nullable=False),
    # Until when a process validating or finalizing it vouches for that work; past it, any may take it.
    Column("lease_until", Float, nullable=True),
)
Index("ix_batches_tenant_id", batches.c.tenant, batches.c.id)
Index("ix_batches_status", batches.c.status)

batch_lines = Table(
    "batch_lines",
    metadata,
    # One request of a batch's input file; ``result`` is its output (or error) file line once it ran.
    Column("batch_id", String(80), primary_key=True),
    Column("line", Integer, primary_key=True),
    Column("custom_id", Text, nullable=False),
    Column("request", Text, nullable=False),
    # pending, running (held by ``holder`` until ``lease_until``), completed, failed.
    Column("state", String(12), nullable=False),
    Column("holder", String(120), nullable=True),
    Column("lease_until", Float, nullable=True),
    Column("result", Text, nullable=True),
    # The response a run of the line is making (set before it can be stored): a run after a crash that
    # finds it stored takes it as the line's result instead of making another (migration 0017).
    Column("response_id", String(80), nullable=True),
)
Index("ix_batch_lines_state", batch_lines.c.batch_id, batch_lines.c.state, batch_lines.c.line)

webhook_endpoints = Table(
    "webhook_endpoints",
    metadata,
    Column("id", String(80), primary_key=True),
    Column("tenant", String(80), nullable=False),
    Column("name", Text, nullable=False),
    Column("url", Text, nullable=False),
    Column("event_types", Text, nullable=False),
    Column("secret", String(120), nullable=False),
    # After a rotation that keeps the old secret for a day, deliveries are signed with both.
    Column("old_secret", String(120), nullable=True),
    Column("old_secret_until", Float, nullable=True),
    Column("created_at", BigInteger, nullable=False),
    Column("updated_at", BigInteger, nullable=False),
)
Index("ix_webhook_endpoints_tenant_id", webhook_endpoints.c.tenant, webhook_endpoints.c.id)

webhook_deliveries = Table(
    "webhook_deliveries",
    metadata,
    # The outbox: one row per event and endpoint, written in the transaction that makes the event true.
    Column("id", String(80), primary_key=True),
    Column("endpoint_id", String(80), nullable=False),
    Column("tenant", String(80), nullable=False),
    Column("event_type", String(60), nullable=False),
    Column("payload", Text, nullable=False),
    # pending (next try at ``next_attempt_at``), sending (held until ``lease_until``), delivered, failed.
    Column("state", String(12), nullable=False),
    Column("attempts", Integer, nullable=False, server_default="0"),
    Column("next_attempt_at", Float, nullable=False),
    Column("lease_until", Float, nullable=True),
    Column("last_status_code", Integer, nullable=True),
    Column("last_error", Text, nullable=True),
    Column("created_at", Float, nullable=False),
    Column("delivered_at", Float, nullable=True),
)
Index("ix_webhook_deliveries_due", webhook_deliveries.c.state, webhook_deliveries.c.next_attempt_at)
Index("ix_webhook_deliveries_endpoint", webhook_deliveries.c.endpoint_id, webhook_deliveries.c.id)

skills = Table(
    "skills",
    metadata,
    Column("id", String(80), primary_key=True),
    Column("tenant", String(80), nullable=False),
    Column("name", Text, nullable=False),
    Column("description", Text, nullable=False),
    Column("default_version", Integer, nullable=False),
    Column("latest_version", Integer, nullable=False),
    Column("created_at", BigInteger, nullable=False),
)
Index("ix_skills_tenant_id", skills.c.tenant, skills.c.id)

skill_versions = Table(
    "skill_versions",
    metadata,
    Column("skill_id", String(80), primary_key=True),
    Column("version", Integer, primary_key=True),
    Column("id", String(80), nullable=False),
    Column("name", Text, nullable=False),
    Column("description", Text, nullable=False),
    Column("created_at", BigInteger, nullable=False),
    # The skill's files as one zip (checked on upload: engine/skills/_bundle.py).
    Column("bundle", LargeBinary, nullable=False),
)

container_skill_files = Table(
    "container_skill_files",
    metadata,
    Column("container_id", String(80), primary_key=True),
    Column("skill", String(80), primary_key=True),
    Column("path", Text, primary_key=True),
    Column("data", LargeBinary, nullable=False),
)
