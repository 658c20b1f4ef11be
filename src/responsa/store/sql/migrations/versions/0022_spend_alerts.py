"""Spend alerts: a project's threshold on its month's spend, and the month it last fired in.

Revision ID: 0022
Revises: 0021
"""

import sqlalchemy as sa
from alembic import op

revision = "0022"
down_revision = "0021"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "spend_alerts",
        sa.Column("id", sa.String(80), primary_key=True),
        sa.Column("project_id", sa.String(80), nullable=False),
        sa.Column("threshold_amount", sa.BigInteger(), nullable=False),
        sa.Column("created_at", sa.BigInteger(), nullable=False),
        sa.Column("fired_for", sa.BigInteger(), nullable=True),
    )
    op.create_index("ix_spend_alerts_project_id", "spend_alerts", ["project_id", "id"])


def downgrade() -> None:
    op.drop_index("ix_spend_alerts_project_id", "spend_alerts")
    op.drop_table("spend_alerts")
