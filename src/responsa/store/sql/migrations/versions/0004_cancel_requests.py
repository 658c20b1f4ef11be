"""A cancel asked for on one process, for the process running the response to act on.

Revision ID: 0004
Revises: 0003
"""

import sqlalchemy as sa
from alembic import op

revision = "0004"
down_revision = "0003"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("responses") as batch:
        batch.add_column(sa.Column("cancel_requested", sa.Boolean, nullable=False, server_default=sa.false()))


def downgrade() -> None:
    with op.batch_alter_table("responses") as batch:
        batch.drop_column("cancel_requested")
