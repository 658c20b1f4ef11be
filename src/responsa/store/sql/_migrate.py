"""Schema migrations (Alembic), run in a process of their own: ``python -m responsa.store.sql._migrate``
with the store URL in ``RESPONSA_MIGRATE_URL`` (not on the command line, where passwords show).

Alembic brings Mako and Pygments along: about 13 MB that would stay in the server for its whole
life if it were imported there, for a job done once per schema version.
"""

from __future__ import annotations

import asyncio
import os
import sys
from pathlib import Path

import anyio
from sqlalchemy import Connection

from ._database import open_database

__all__ = ["MIGRATIONS", "SchemaTooNew", "known_revisions", "upgrade_in_child", "upgrade_to_head"]

MIGRATIONS = Path(__file__).parent / "migrations"
_URL_VARIABLE = "RESPONSA_MIGRATE_URL"


class SchemaTooNew(RuntimeError):
    """The store was migrated by a newer version of responsa: this one must not serve from it."""


def known_revisions() -> frozenset[str]:
    """The revisions this version's migrations know (each file's name starts with its revision)."""
    return frozenset(path.name.split("_", 1)[0] for path in (MIGRATIONS / "versions").glob("[0-9]*_*.py"))


def upgrade_to_head(connection: Connection) -> None:
    """Alembic's ``upgrade head`` on ``connection``, inside the caller's transaction."""
    from alembic import command
    from alembic.config import Config

    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS))
    config.attributes["connection"] = connection
    command.upgrade(config, "head")


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
