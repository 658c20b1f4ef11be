"""Projects (the Admin API's: each a tenant), their service accounts, and API keys (a project's, or
with no project an admin key), kept as the SHA-256 of their secret; and the count of their changes.

Revision ID: 0019
Revises: 0018
"""

import sqlalchemy as sa
from alembic import op

revision = "0019"
down_revision = "0018"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "projects",
        sa.Column("id", sa.String(80), primary_key=True),
        sa.Column("name", sa.Text(), nullable=False),
        sa.Column("created_at", sa.BigInteger(), nullable=False),
        sa.Column("archived_at", sa.BigInteger(), nullable=True),
        sa.Column("source", sa.String(16), nullable=False),
        sa.Column("model_permissions", sa.Text(), nullable=True),
        sa.Column("tool_permissions", sa.Text(), nullable=True),
    )
    op.create_table(
        "service_accounts",
        sa.Column("id", sa.String(80), primary_key=True),
        sa.Column("project_id", sa.String(80), nullable=False),
        sa.Column("name", sa.Text(), nullable=False),
        sa.Column("role", sa.String(16), nullable=False),
        sa.Column("created_at", sa.BigInteger(), nullable=False),
    )
    op.create_index("ix_service_accounts_project_id", "service_accounts", ["project_id", "id"])
    op.create_table(
        "api_keys",
        sa.Column("id", sa.String(80), primary_key=True),
        sa.Column("secret_hash", sa.String(64), nullable=False, unique=True),
        sa.Column("name", sa.Text(), nullable=False),
        sa.Column("redacted_value", sa.Text(), nullable=False),
        sa.Column("created_at", sa.BigInteger(), nullable=False),
        sa.Column("project_id", sa.String(80), nullable=True),
        sa.Column("service_account_id", sa.String(80), nullable=True),
        sa.Column("expires_at", sa.BigInteger(), nullable=True),
        sa.Column("last_used_at", sa.BigInteger(), nullable=True),
    )
    op.create_index("ix_api_keys_project_id", "api_keys", ["project_id", "id"])
    op.create_table(
        "project_changes",
        sa.Column("id", sa.Integer(), primary_key=True),
        sa.Column("changes", sa.BigInteger(), nullable=False, server_default="0"),
    )
    op.execute("INSERT INTO project_changes (id, changes) VALUES (1, 0)")


def downgrade() -> None:
    op.drop_table("project_changes")
    op.drop_index("ix_api_keys_project_id", "api_keys")
    op.drop_table("api_keys")
    op.drop_index("ix_service_accounts_project_id", "service_accounts")
    op.drop_table("service_accounts")
    op.drop_table("projects")
