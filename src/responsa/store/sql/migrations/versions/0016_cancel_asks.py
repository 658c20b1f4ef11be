"""The database counts the cancels ever asked for, in one row, so that a process running responses
learns with one primary-key read whether anyone asked to cancel anything since it last looked, and
reads which of its responses only then: looking every 50 ms costs a read of one row, not a search
through the ids of every response it runs. The count is the database's own (a trigger), so a cancel
asked through any replica, an older one during a rolling upgrade included, counts, as removals do
(migrations 0011, 0012).

Revision ID: 0016
Revises: 0015
"""

import sqlalchemy as sa
from alembic import op

revision = "0016"
down_revision = "0015"
branch_labels = None
depends_on = None

_COUNT = "UPDATE cancel_asks SET asked = asked + 1 WHERE id = 1"


def upgrade() -> None:
    table = op.create_table(
        "cancel_asks",
        sa.Column("id", sa.Integer(), primary_key=True),
        sa.Column("asked", sa.BigInteger(), nullable=False, server_default="0"),
    )
    op.bulk_insert(table, [{"id": 1, "asked": 0}])
    if op.get_bind().dialect.name == "postgresql":
        op.execute(f"CREATE FUNCTION cancel_asked() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN {_COUNT}; "
                   "RETURN NULL; END $$")  # fmt: skip
        op.execute("CREATE TRIGGER cancel_asked AFTER UPDATE OF cancel_requested ON responses "
                   "FOR EACH ROW WHEN (NEW.cancel_requested) EXECUTE FUNCTION cancel_asked()")  # fmt: skip
    else:
        op.execute("CREATE TRIGGER cancel_asked AFTER UPDATE OF cancel_requested ON responses "
                   f"FOR EACH ROW WHEN NEW.cancel_requested BEGIN {_COUNT}; END")  # fmt: skip


def downgrade() -> None:
    postgresql = op.get_bind().dialect.name == "postgresql"
    op.execute("DROP TRIGGER cancel_asked" + (" ON responses" if postgresql else ""))
    if postgresql:
        op.execute("DROP FUNCTION cancel_asked()")
    op.drop_table("cancel_asks")
