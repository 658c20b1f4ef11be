"""The server's secret key, which seals what clients hand back later (compaction items)."""

from __future__ import annotations

import contextlib
import hashlib
import logging
import os
from pathlib import Path

from responsa.config import Settings

__all__ = ["secret_key"]

logger = logging.getLogger(__name__)


def secret_key(settings: Settings) -> bytes:
    """The key that seals compaction items: from ``--secret-key``; else a random one kept in a file
    beside the SQLite database (made on first start); else, for PostgreSQL or an in-memory database,
    a random one for this server only, with a warning (other replicas cannot open its items). The
    parent of ``--workers N`` calls it once and hands the key to every worker (``WorkerGroup``)."""
    if settings.secret_key:
        return hashlib.sha256(settings.secret_key.encode()).digest()
    database = settings.db_url.removeprefix("sqlite:///")
    if settings.db_url.startswith("sqlite:///") and database and ":memory:" not in database:
        path = Path(database + ".key")
        if not path.exists():
            with contextlib.suppress(FileExistsError):
                descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
                with os.fdopen(descriptor, "wb") as handle:
                    handle.write(os.urandom(32))
        key = path.read_bytes()
        if len(key) == 32:
            return key
        logger.warning("%s does not hold a 32-byte key; using one for this server only", path)
    else:
        logger.warning("no --secret-key: compaction items made here open only on this server until it stops")
    return os.urandom(32)
