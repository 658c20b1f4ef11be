"""Responses and their input/output items.

Revision ID: 0001
Revises:
"""

import sqlalchemy as sa
from alembic import op

revision = "0001"
down_revision = None
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "responses",
        sa.Column("id", sa.String(80), primary_key=True),
        sa.Column("created_at", sa.BigInteger, nullable=False),
        sa.Column("status", sa.String(20), nullable=False),
        sa.Column("previous_response_id", sa.String(80), nullable=True),
        sa.Column("body", sa.Text, nullable=False),
    )
    op.create_table(
        "response_items",
        sa.Column("response_id", sa.String(80), primary_key=True),
        sa.Column("role", sa.String(8), primary_key=True),
        sa.Column("position", sa.Integer, primary_key=True),
        sa.Column("item_id", sa.String(128), nullable=True),
        sa.Column("body", sa.Text, nullable=False),
    )
    op.create_index("ix_response_items_item_id", "response_items", ["item_id"])


def downgrade() -> None:
    op.drop_index("ix_response_items_item_id", "response_items")
    op.drop_table("response_items")
    op.drop_table("responses")
