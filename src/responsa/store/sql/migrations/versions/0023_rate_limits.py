"""A project's rate limits per model (the Admin API's ``rate_limits``), as JSON on its row.

Revision ID: 0023
Revises: 0022
"""

import sqlalchemy as sa
from alembic import op

revision = "0023"
down_revision = "0022"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("projects") as table:
        table.add_column(sa.Column("rate_limits", sa.Text(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("projects") as table:
        table.drop_column("rate_limits")
