"""Responses whose status column and body disagree are made to say one thing, the body's; a batch
line remembers the response its run is making, so that a run whose response was stored but whose
result was not (a kill between the two) is not run a second time.

Before this version the first save of a streamed response dumped its body when it was asked for but
read the status column when the write ran, after the run might have finished: the row said
``completed`` in its column and ``in_progress`` in its body (with no output), and a process killed
before the final save left it so for good (the orphan search reads the column, GET serves the body).
The body is what was true when the row was written: the column takes it back, and an unfinished one
loses its lease, so the server's start-up search for orphans ends it ``failed`` (``server_restarted``),
as any response whose process died.

Revision ID: 0017
Revises: 0016
"""

import sqlalchemy as sa
from alembic import op

revision = "0017"
down_revision = "0016"
branch_labels = None
depends_on = None


def upgrade() -> None:
    if op.get_bind().dialect.name == "postgresql":
        said = "(body::jsonb ->> 'status')"
    else:
        said = "json_extract(body, '$.status')"
    op.execute(
        f"UPDATE responses SET status = {said}, "
        f"lease_until = CASE WHEN {said} IN ('queued', 'in_progress') THEN NULL ELSE lease_until END "
        f"WHERE status <> {said}"
    )
    op.add_column("batch_lines", sa.Column("response_id", sa.String(80), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("batch_lines") as table:
        table.drop_column("response_id")  # the responses keep what they said in their bodies
