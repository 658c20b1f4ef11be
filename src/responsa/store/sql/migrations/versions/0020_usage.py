"""The usage ledger: what every request used, rolled up by minute, hour and day, by project, key,
model, kind (completions, embeddings, tool calls, ...) and batch or not, with a latency histogram;
and a project's spend limit.

Revision ID: 0020
Revises: 0019
"""

import sqlalchemy as sa
from alembic import op

revision = "0020"
down_revision = "0019"
branch_labels = None
depends_on = None

_COUNTS = ("requests", "errors", "input_tokens", "output_tokens", "cached_tokens", "units", "latency_ms",
           *(f"latency_{index}" for index in range(12)))  # fmt: skip


def upgrade() -> None:
    op.create_table(
        "usage_buckets",
        sa.Column("width", sa.String(2), primary_key=True),
        sa.Column("start", sa.BigInteger(), primary_key=True),
        sa.Column("project_id", sa.String(80), primary_key=True),
        sa.Column("api_key_id", sa.String(80), primary_key=True),
        sa.Column("model", sa.String(160), primary_key=True),
        sa.Column("kind", sa.String(32), primary_key=True),
        sa.Column("batch", sa.Boolean(), primary_key=True),
        *(sa.Column(name, sa.BigInteger(), nullable=False) for name in _COUNTS),
    )
    with op.batch_alter_table("projects") as table:
        table.add_column(sa.Column("spend_limit", sa.Text(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("projects") as table:
        table.drop_column("spend_limit")
    op.drop_table("usage_buckets")
