"""Each conversation counts the items ever removed from it, so a process holding a parsed snapshot of
its items checks that none went with one column of the conversation's row instead of counting them.

The database keeps the count itself (a trigger on ``conversation_items``), so every deletion counts
whoever makes it: this version, an older replica during a rolling upgrade, an operator's SQL. A later
migration that rebuilds ``conversation_items`` (SQLite's batch mode copies the table) must create the
trigger again.

Revision ID: 0011
Revises: 0010
"""

import sqlalchemy as sa
from alembic import op

revision = "0011"
down_revision = "0010"
branch_labels = None
depends_on = None

_COUNT = "UPDATE conversations SET items_removed = items_removed + 1 WHERE id = OLD.conversation_id"


def upgrade() -> None:
    with op.batch_alter_table("conversations") as batch:
        batch.add_column(sa.Column("items_removed", sa.BigInteger(), nullable=False, server_default="0"))
    if op.get_bind().dialect.name == "postgresql":
        op.execute(
            "CREATE FUNCTION conversation_item_removed() RETURNS trigger LANGUAGE plpgsql AS "
            f"$$ BEGIN {_COUNT}; RETURN NULL; END $$"
        )
        op.execute(
            "CREATE TRIGGER conversation_item_removed AFTER DELETE ON conversation_items "
            "FOR EACH ROW EXECUTE FUNCTION conversation_item_removed()"
        )
    else:
        op.execute(
            "CREATE TRIGGER conversation_item_removed AFTER DELETE ON conversation_items "
            f"FOR EACH ROW BEGIN {_COUNT}; END"
        )


def downgrade() -> None:
    postgresql = op.get_bind().dialect.name == "postgresql"
    op.execute("DROP TRIGGER conversation_item_removed" + (" ON conversation_items" if postgresql else ""))
    if postgresql:
        op.execute("DROP FUNCTION conversation_item_removed()")
    with op.batch_alter_table("conversations") as batch:
        batch.drop_column("items_removed")
