"""Which Python holds a container's state: the process (of a replica or worker) that last started one
for it. Another process about to run the container's code starts a fresh Python, and knowing one was
there before, it tells the client that state restarted instead of running on as if nothing was lost;
the process that held it stops its Python when it sees the container claimed elsewhere.

Revision ID: 0013
Revises: 0012
"""

import sqlalchemy as sa
from alembic import op

revision = "0013"
down_revision = "0012"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.add_column("containers", sa.Column("python", sa.String(120), nullable=True))


def downgrade() -> None:
    op.drop_column("containers", "python")
