"""A scratch table for the health check's probe write (GET /health while the store was failing).

Revision ID: 0010
Revises: 0009
"""

import sqlalchemy as sa
from alembic import op

revision = "0010"
down_revision = "0009"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "store_probe",
        sa.Column("id", sa.String(80), primary_key=True),
        sa.Column("written_at", sa.Float(), nullable=False),
        sa.Column("pad", sa.Text(), nullable=False),
    )


def downgrade() -> None:
    op.drop_table("store_probe")
