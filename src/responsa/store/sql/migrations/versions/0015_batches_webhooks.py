"""The Batch API's batches and their lines, and webhooks: endpoints and the outbox of deliveries
(written in the transaction that makes an event true, so none is lost across a crash).

Revision ID: 0015
Revises: 0014
"""

import sqlalchemy as sa
from alembic import op

revision = "0015"
down_revision = "0014"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "batches",
        sa.Column("id", sa.String(80), primary_key=True),
        sa.Column("tenant", sa.String(80), nullable=False),
        sa.Column("status", sa.String(20), nullable=False),
        sa.Column("body", sa.Text(), nullable=False),
        sa.Column("expires_at", sa.BigInteger(), nullable=False),
        sa.Column("lease_until", sa.Float(), nullable=True),
    )
    op.create_index("ix_batches_tenant_id", "batches", ["tenant", "id"])
    op.create_index("ix_batches_status", "batches", ["status"])
    op.create_table(
        "batch_lines",
        sa.Column("batch_id", sa.String(80), primary_key=True),
        sa.Column("line", sa.Integer(), primary_key=True),
        sa.Column("custom_id", sa.Text(), nullable=False),
        sa.Column("request", sa.Text(), nullable=False),
        sa.Column("state", sa.String(12), nullable=False),
        sa.Column("holder", sa.String(120), nullable=True),
        sa.Column("lease_until", sa.Float(), nullable=True),
        sa.Column("result", sa.Text(), nullable=True),
    )
    op.create_index("ix_batch_lines_state", "batch_lines", ["batch_id", "state", "line"])
    op.create_table(
        "webhook_endpoints",
        sa.Column("id", sa.String(80), primary_key=True),
        sa.Column("tenant", sa.String(80), nullable=False),
        sa.Column("name", sa.Text(), nullable=False),
        sa.Column("url", sa.Text(), nullable=False),
        sa.Column("event_types", sa.Text(), nullable=False),
        sa.Column("secret", sa.String(120), nullable=False),
        sa.Column("old_secret", sa.String(120), nullable=True),
        sa.Column("old_secret_until", sa.Float(), nullable=True),
        sa.Column("created_at", sa.BigInteger(), nullable=False),
        sa.Column("updated_at", sa.BigInteger(), nullable=False),
    )
    op.create_index("ix_webhook_endpoints_tenant_id", "webhook_endpoints", ["tenant", "id"])
    op.create_table(
        "webhook_deliveries",
        sa.Column("id", sa.String(80), primary_key=True),
        sa.Column("endpoint_id", sa.String(80), nullable=False),
        sa.Column("tenant", sa.String(80), nullable=False),
        sa.Column("event_type", sa.String(60), nullable=False),
        sa.Column("payload", sa.Text(), nullable=False),
        sa.Column("state", sa.String(12), nullable=False),
        sa.Column("attempts", sa.Integer(), nullable=False, server_default="0"),
        sa.Column("next_attempt_at", sa.Float(), nullable=False),
        sa.Column("lease_until", sa.Float(), nullable=True),
        sa.Column("last_status_code", sa.Integer(), nullable=True),
        sa.Column("last_error", sa.Text(), nullable=True),
        sa.Column("created_at", sa.Float(), nullable=False),
        sa.Column("delivered_at", sa.Float(), nullable=True),
    )
    op.create_index("ix_webhook_deliveries_due", "webhook_deliveries", ["state", "next_attempt_at"])
    op.create_index("ix_webhook_deliveries_endpoint", "webhook_deliveries", ["endpoint_id", "id"])


def downgrade() -> None:
    op.drop_index("ix_webhook_deliveries_endpoint", table_name="webhook_deliveries")
    op.drop_index("ix_webhook_deliveries_due", table_name="webhook_deliveries")
    op.drop_table("webhook_deliveries")
    op.drop_index("ix_webhook_endpoints_tenant_id", table_name="webhook_endpoints")
    op.drop_table("webhook_endpoints")
    op.drop_index("ix_batch_lines_state", table_name="batch_lines")
    op.drop_table("batch_lines")
    op.drop_index("ix_batches_status", table_name="batches")
    op.drop_index("ix_batches_tenant_id", table_name="batches")
    op.drop_table("batches")
