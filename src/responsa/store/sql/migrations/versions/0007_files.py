"""Files: their rows, and their bytes in parts (POST /v1/files).

Revision ID: 0007
Revises: 0006
"""

import sqlalchemy as sa
from alembic import op

revision = "0007"
down_revision = "0006"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "files",
        sa.Column("id", sa.String(80), primary_key=True),
        sa.Column("tenant", sa.String(80), nullable=False),
        sa.Column("created_at", sa.BigInteger(), nullable=False),
        sa.Column("expires_at", sa.BigInteger(), nullable=True),
        sa.Column("purpose", sa.String(40), nullable=False),
        sa.Column("filename", sa.Text(), nullable=False),
        sa.Column("bytes", sa.BigInteger(), nullable=False),
        sa.Column("sha256", sa.String(64), nullable=False),
    )
    op.create_index("ix_files_tenant_id", "files", ["tenant", "id"])
    op.create_table(
        "file_parts",
        sa.Column("file_id", sa.String(80), primary_key=True),
        sa.Column("position", sa.Integer(), primary_key=True),
        sa.Column("data", sa.LargeBinary(), nullable=False),
        sa.Column("written_at", sa.Float(), nullable=False),
    )


def downgrade() -> None:
    op.drop_table("file_parts")
    op.drop_index("ix_files_tenant_id", "files")
    op.drop_table("files")
