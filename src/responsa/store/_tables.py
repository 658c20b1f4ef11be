"""Table definitions (SQLAlchemy Core); the migrations create exactly these."""

from __future__ import annotations

from sqlalchemy import BigInteger, Boolean, Column, Float, Index, Integer, MetaData, String, Table, Text, false

__all__ = [
    "SCHEMA_VERSION",
    "conversation_items",
    "conversations",
    "metadata",
    "response_events",
    "response_items",
    "responses",
]

SCHEMA_VERSION = "0006"
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
