"""The database counts the responses ever removed, in one row, so that a process holding the contexts
of chains it read before (its context cache) can tell, with one primary-key read, whether any response
went since: then what it cached may run through a deleted response, and it reads the chain again. A
deletion through any replica, worker or an operator's SQL counts, as the conversations' removals do
(migration 0011).

Revision ID: 0012
Revises: 0011
"""

import sqlalchemy as sa
from alembic import op

revision = "0012"
down_revision = "0011"
branch_labels = None
depends_on = None

_COUNT = "UPDATE response_removals SET removed = removed + 1 WHERE id = 1"


def upgrade() -> None:
    table = op.create_table(
        "response_removals",
        sa.Column("id", sa.Integer(), primary_key=True),
        sa.Column("removed", sa.BigInteger(), nullable=False, server_default="0"),
    )
    op.bulk_insert(table, [{"id": 1, "removed": 0}])
    if op.get_bind().dialect.name == "postgresql":
        op.execute(f"CREATE FUNCTION response_removed() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN {_COUNT}; "
                   "RETURN NULL; END $$")  # fmt: skip
        # Once a statement: a sweep that removes a thousand responses counts one change, not a thousand.
        op.execute("CREATE TRIGGER response_removed AFTER DELETE ON responses "
                   "FOR EACH STATEMENT EXECUTE FUNCTION response_removed()")  # fmt: skip
    else:
        op.execute(f"CREATE TRIGGER response_removed AFTER DELETE ON responses FOR EACH ROW BEGIN {_COUNT}; END")


def downgrade() -> None:
    postgresql = op.get_bind().dialect.name == "postgresql"
    op.execute("DROP TRIGGER response_removed" + (" ON responses" if postgresql else ""))
    if postgresql:
        op.execute("DROP FUNCTION response_removed()")
    op.drop_table("response_removals")
