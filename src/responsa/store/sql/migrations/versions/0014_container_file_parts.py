"""A container file's bytes in the store, in parts, beside its row: any replica can read them, and a
container whose code reaches a replica on another machine moves there with its files (its Python
restarts, and the call says so) instead of being refused.

Revision ID: 0014
Revises: 0013
"""

import sqlalchemy as sa
from alembic import op

revision = "0014"
down_revision = "0013"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "container_file_parts",
        sa.Column("file_id", sa.String(80), primary_key=True),
        sa.Column("position", sa.Integer(), primary_key=True),
        sa.Column("container_id", sa.String(80), nullable=False),
        sa.Column("data", sa.LargeBinary(), nullable=False),
    )
    op.create_index("ix_container_file_parts_container", "container_file_parts", ["container_id"])


def downgrade() -> None:
    op.drop_index("ix_container_file_parts_container", table_name="container_file_parts")
    op.drop_table("container_file_parts")
