"""Vector stores, their files (and batches of them), and the chunks keyword search runs on (SQLite FTS5 with the porter
stemmer; PostgreSQL full-text search on a generated tsvector with a GIN index).

Revision ID: 0008
Revises: 0007
"""

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision = "0008"
down_revision = "0007"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "vector_stores",
        sa.Column("id", sa.String(80), primary_key=True),
        sa.Column("tenant", sa.String(80), nullable=False),
        sa.Column("created_at", sa.BigInteger(), nullable=False),
        sa.Column("name", sa.Text(), nullable=False),
        sa.Column("metadata", sa.Text(), nullable=False),
        sa.Column("expires_after_days", sa.Integer(), nullable=True),
        sa.Column("last_active_at", sa.BigInteger(), nullable=False),
    )
    op.create_index("ix_vector_stores_tenant_id", "vector_stores", ["tenant", "id"])
    op.create_table(
        "vector_store_files",
        sa.Column("vector_store_id", sa.String(80), primary_key=True),
        sa.Column("file_id", sa.String(80), primary_key=True),
        sa.Column("created_at", sa.BigInteger(), nullable=False),
        sa.Column("status", sa.String(20), nullable=False),
        sa.Column("last_error", sa.Text(), nullable=True),
        sa.Column("attributes", sa.Text(), nullable=True),
        sa.Column("chunking", sa.Text(), nullable=False),
        sa.Column("usage_bytes", sa.BigInteger(), nullable=False, server_default="0"),
        sa.Column("batch_id", sa.String(80), nullable=True),
    )
    op.create_table(
        "vector_store_file_batches",
        sa.Column("id", sa.String(80), primary_key=True),
        sa.Column("vector_store_id", sa.String(80), nullable=False),
        sa.Column("created_at", sa.BigInteger(), nullable=False),
        sa.Column("cancelled", sa.Boolean(), nullable=False, server_default=sa.false()),
    )
    op.create_index("ix_vector_store_files_file", "vector_store_files", ["file_id"])
    postgres = op.get_bind().dialect.name == "postgresql"
    extra = []
    if postgres:
        tsv = sa.Computed("to_tsvector('english', text)", persisted=True)
        extra.append(sa.Column("tsv", postgresql.TSVECTOR(), tsv))
    op.create_table(
        "chunks",
        sa.Column("id", sa.Integer(), primary_key=True, autoincrement=True),
        sa.Column("vector_store_id", sa.String(80), nullable=False),
        sa.Column("file_id", sa.String(80), nullable=False),
        sa.Column("position", sa.Integer(), nullable=False),
        sa.Column("text", sa.Text(), nullable=False),
        *extra,
    )
    op.create_index("ix_chunks_store_file", "chunks", ["vector_store_id", "file_id"])
    op.create_table(
        "chunk_vectors",
        sa.Column("chunk_id", sa.Integer(), primary_key=True),
        sa.Column("vector_store_id", sa.String(80), nullable=False),
        sa.Column("vector", sa.LargeBinary(), nullable=False),
    )
    op.create_index("ix_chunk_vectors_store", "chunk_vectors", ["vector_store_id", "chunk_id"])
    if postgres:
        op.create_index("ix_chunks_tsv", "chunks", ["tsv"], postgresql_using="gin")
    else:
        op.execute(
            "CREATE VIRTUAL TABLE chunks_fts USING fts5(text, content='chunks', content_rowid='id', "
            "tokenize='porter unicode61')"
        )


def downgrade() -> None:
    if op.get_bind().dialect.name != "postgresql":
        op.execute("DROP TABLE chunks_fts")
    op.drop_table("chunk_vectors")
    op.drop_table("chunks")
    op.drop_table("vector_store_file_batches")
    op.drop_table("vector_store_files")
    op.drop_table("vector_stores")
