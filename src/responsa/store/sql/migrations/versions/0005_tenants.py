"""Every response and conversation belongs to the tenant (API key) that created it.

Revision ID: 0005
Revises: 0004
"""

import sqlalchemy as sa
from alembic import op

revision = "0005"
down_revision = "0004"
branch_labels = None
depends_on = None


def upgrade() -> None:
    for table in ("responses", "conversations"):
        with op.batch_alter_table(table) as batch:
            batch.add_column(sa.Column("tenant", sa.String(80), nullable=False, server_default="default"))


def downgrade() -> None:
    for table in ("responses", "conversations"):
        with op.batch_alter_table(table) as batch:
            batch.drop_column("tenant")
