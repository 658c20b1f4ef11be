"""The audit log: every admin action and every use of a key outside its permissions.

Revision ID: 0021
Revises: 0020
"""

import sqlalchemy as sa
from alembic import op

revision = "0021"
down_revision = "0020"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "audit_logs",
        sa.Column("id", sa.String(80), primary_key=True),
        sa.Column("effective_at", sa.BigInteger(), nullable=False),
        sa.Column("type", sa.String(64), nullable=False),
        sa.Column("project_id", sa.String(80), nullable=True),
        sa.Column("actor_id", sa.String(80), nullable=True),
        sa.Column("resource_id", sa.String(80), nullable=True),
        sa.Column("body", sa.Text(), nullable=False),
    )
    op.create_index("ix_audit_logs_effective_at", "audit_logs", ["effective_at"])


def downgrade() -> None:
    op.drop_index("ix_audit_logs_effective_at", "audit_logs")
    op.drop_table("audit_logs")
