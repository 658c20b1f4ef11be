"""The store over SQL (SQLAlchemy Core; SQLite through its own writer thread, PostgreSQL through an
async driver), with its schema and migrations (Alembic)."""

from ._migrate import schema_state
from ._store import SqlStore

__all__ = ["SqlStore", "schema_state"]
