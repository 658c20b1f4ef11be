"""Conversations and their items; responses get a fine-grained storage time for retention.

Revision ID: 0002
Revises: 0001
"""

import sqlalchemy as sa
from alembic import op

revision = "0002"
down_revision = "0001"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("responses") as batch:
        batch.add_column(sa.Column("stored_at", sa.Float, nullable=False, server_default="0"))
        batch.add_column(sa.Column("conversation_id", sa.String(80), nullable=True))
    op.create_index("ix_responses_stored_at", "responses", ["stored_at"])
    op.create_table(
        "conversations",
        sa.Column("id", sa.String(80), primary_key=True),
        sa.Column("created_at", sa.BigInteger, nullable=False),
        sa.Column("stored_at", sa.Float, nullable=False),
        sa.Column("metadata", sa.Text, nullable=False),
    )
    op.create_index("ix_conversations_stored_at", "conversations", ["stored_at"])
    op.create_table(
        "conversation_items",
        sa.Column("conversation_id", sa.String(80), primary_key=True),
        sa.Column("position", sa.Integer, primary_key=True),
        sa.Column("item_id", sa.String(128), nullable=True),
        sa.Column("body", sa.Text, nullable=False),
    )
    op.create_index("ix_conversation_items_item", "conversation_items", ["conversation_id", "item_id"])
    op.create_index("ix_conversation_items_item_id", "conversation_items", ["item_id"])


def downgrade() -> None:
    op.drop_table("conversation_items")
    op.drop_table("conversations")
    op.drop_index("ix_responses_stored_at", "responses")
    with op.batch_alter_table("responses") as batch:
        batch.drop_column("conversation_id")
        batch.drop_column("stored_at")
