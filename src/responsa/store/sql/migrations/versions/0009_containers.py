"""Containers of the code interpreter and their files (POST /v1/containers).

Revision ID: 0009
Revises: 0008
"""

import sqlalchemy as sa
from alembic import op

revision = "0009"
down_revision = "0008"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "containers",
        sa.Column("id", sa.String(80), primary_key=True),
        sa.Column("tenant", sa.String(80), nullable=False),
        sa.Column("name", sa.Text(), nullable=False),
        sa.Column("created_at", sa.BigInteger(), nullable=False),
        sa.Column("last_active_at", sa.BigInteger(), nullable=False),
        sa.Column("expires_after_minutes", sa.Integer(), nullable=False),
        sa.Column("memory_limit", sa.String(8), nullable=False),
        sa.Column("status", sa.String(20), nullable=False),
    )
    op.create_index("ix_containers_tenant_id", "containers", ["tenant", "id"])
    op.create_table(
        "container_files",
        sa.Column("id", sa.String(80), primary_key=True),
        sa.Column("container_id", sa.String(80), nullable=False),
        sa.Column("path", sa.Text(), nullable=False),
        sa.Column("bytes", sa.BigInteger(), nullable=False),
        sa.Column("source", sa.String(20), nullable=False),
        sa.Column("created_at", sa.BigInteger(), nullable=False),
    )
    op.create_index("ix_container_files_container", "container_files", ["container_id", "id"])


def downgrade() -> None:
    op.drop_index("ix_container_files_container", "container_files")
    op.drop_table("container_files")
    op.drop_index("ix_containers_tenant_id", "containers")
    op.drop_table("containers")
