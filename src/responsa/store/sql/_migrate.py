"""The schema: where a store stands against this version's (``schema_version``, ``schema_state``), and
its migrations (Alembic), run in a process of their own: ``python -m responsa.store.sql._migrate``
with the store URL in ``RESPONSA_MIGRATE_URL`` (not on the command line, where passwords show).

Alembic brings Mako and Pygments along: about 13 MB that would stay in the server for its whole
life if it were imported there, for a job done once per schema version.
"""

from __future__ import annotations

import asyncio
import os
import sqlite3
import sys
from collections.abc import Callable
from pathlib import Path

import anyio
from sqlalchemy import Connection, text
from sqlalchemy.engine import make_url
from sqlalchemy.exc import DBAPIError

from ._database import Sql, open_database
from ._tables import SCHEMA_VERSION

__all__ = [
    "MIGRATIONS",
    "SchemaTooNew",
    "newer_than_known",
    "schema_state",
    "schema_version",
    "upgrade_in_child",
    "upgrade_to",
    "upgrade_to_head",
]

MIGRATIONS = Path(__file__).parent / "migrations"
_URL_VARIABLE = "RESPONSA_MIGRATE_URL"


class SchemaTooNew(RuntimeError):
    """The store was migrated by a newer version of responsa: this one must not serve from it."""


def newer_than_known(found: str | None) -> bool:
    """Whether a store's revision is one this version's migrations do not know (a newer responsa's:
    each migration file's name starts with its revision)."""
    known = {path.name.split("_", 1)[0] for path in (MIGRATIONS / "versions").glob("[0-9]*_*.py")}
    return found is not None and found not in known


def schema_version(conn: Sql) -> str | None:
    """The store's revision (None before its first migration)."""
    try:
        version: str | None = conn.execute(text("SELECT version_num FROM alembic_version")).scalar()
    except (sqlite3.Error, DBAPIError):  # no such table yet
        return None
    return version


async def schema_state(url: str) -> str:
    """Where the store at ``url`` stands against this version's schema, changing nothing (for ``responsa
    doctor``). A SQLite file not made yet is said so, not made; one that cannot be opened raises."""
    target = make_url(url)
    if target.get_backend_name() == "sqlite" and target.database not in (None, "", ":memory:"):
        if not Path(target.database).exists():
            return f"no database yet: the first serve makes it (schema {SCHEMA_VERSION})"
    database = open_database(url)
    try:
        found = await database.read(schema_version)
    finally:
        await database.aclose()
    if found == SCHEMA_VERSION:
        return f"schema at this version's revision ({SCHEMA_VERSION})"
    if newer_than_known(found):
        return f"schema at {found}, newer than this version's ({SCHEMA_VERSION}): serve refuses it"
    return f"schema at {found or 'none'}, this version's is {SCHEMA_VERSION}: serve migrates it"


def upgrade_to(revision: str) -> Callable[[Connection], None]:
    """Alembic's ``upgrade <revision>`` on a connection, inside the caller's transaction."""

    def upgrade(connection: Connection) -> None:
        from alembic import command
        from alembic.config import Config

        config = Config()
        config.set_main_option("script_location", str(MIGRATIONS))
        config.attributes["connection"] = connection
        command.upgrade(config, revision)

    return upgrade


upgrade_to_head = upgrade_to("head")
"""Alembic's ``upgrade head`` (what the server runs)."""


async def upgrade_in_child(url: str) -> None:
    """Migrate the store at ``url`` from a child process; its error output becomes the exception."""
    done = await anyio.run_process(
        [sys.executable, "-m", "responsa.store.sql._migrate"], env={**os.environ, _URL_VARIABLE: url}, check=False
    )
    if done.returncode != 0:
        raise RuntimeError(f"migrating the store failed:\n{done.stderr.decode(errors='replace')[-4000:]}")


async def _upgrade(url: str) -> None:
    database = open_database(url)
    try:
        await database.migrate(upgrade_to_head)
    finally:
        await database.aclose()


if __name__ == "__main__":
    asyncio.run(_upgrade(os.environ[_URL_VARIABLE]))
