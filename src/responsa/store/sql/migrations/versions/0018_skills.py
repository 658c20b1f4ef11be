"""Skills (``/v1/skills``): each skill of a tenant, and its versions with their files as one zip; and
the files of the skills a container mounts (so another machine that takes the container over mounts
them too); and a container's network policy (``disabled``, or an allowlist of domains).

Revision ID: 0018
Revises: 0017
"""

import sqlalchemy as sa
from alembic import op

revision = "0018"
down_revision = "0017"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "skills",
        sa.Column("id", sa.String(80), primary_key=True),
        sa.Column("tenant", sa.String(80), nullable=False),
        sa.Column("name", sa.Text(), nullable=False),
        sa.Column("description", sa.Text(), nullable=False),
        sa.Column("default_version", sa.Integer(), nullable=False),
        sa.Column("latest_version", sa.Integer(), nullable=False),
        sa.Column("created_at", sa.BigInteger(), nullable=False),
    )
    op.create_index("ix_skills_tenant_id", "skills", ["tenant", "id"])
    op.create_table(
        "skill_versions",
        sa.Column("skill_id", sa.String(80), primary_key=True),
        sa.Column("version", sa.Integer(), primary_key=True),
        sa.Column("id", sa.String(80), nullable=False),
        sa.Column("name", sa.Text(), nullable=False),
        sa.Column("description", sa.Text(), nullable=False),
        sa.Column("created_at", sa.BigInteger(), nullable=False),
        sa.Column("bundle", sa.LargeBinary(), nullable=False),
    )
    op.create_table(
        "container_skill_files",
        sa.Column("container_id", sa.String(80), primary_key=True),
        sa.Column("skill", sa.String(80), primary_key=True),
        sa.Column("path", sa.Text(), primary_key=True),
        sa.Column("data", sa.LargeBinary(), nullable=False),
    )
    with op.batch_alter_table("containers") as table:
        table.add_column(sa.Column("network_policy", sa.Text(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("containers") as table:
        table.drop_column("network_policy")
    op.drop_table("container_skill_files")
    op.drop_table("skill_versions")
    op.drop_index("ix_skills_tenant_id", "skills")
    op.drop_table("skills")
