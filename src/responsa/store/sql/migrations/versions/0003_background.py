"""Background responses: a flag and a lease to find orphaned ones, and the durable event log.

Revision ID: 0003
Revises: 0002
"""

import sqlalchemy as sa
from alembic import op

revision = "0003"
down_revision = "0002"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("responses") as batch:
        batch.add_column(sa.Column("background", sa.Boolean, nullable=False, server_default=sa.false()))
        batch.add_column(sa.Column("lease_until", sa.Float, nullable=True))
    op.create_index("ix_responses_background_status", "responses", ["background", "status"])
    op.create_table(
        "response_events",
        sa.Column("response_id", sa.String(80), primary_key=True),
        sa.Column("sequence_number", sa.Integer, primary_key=True),
        sa.Column("type", sa.String(80), nullable=False),
        sa.Column("body", sa.Text, nullable=False),
    )


def downgrade() -> None:
    op.drop_table("response_events")
    op.drop_index("ix_responses_background_status", "responses")
    with op.batch_alter_table("responses") as batch:
        batch.drop_column("lease_until")
        batch.drop_column("background")
