"""A fresh SQLite store for a test server, already at this version's schema: the file is copied from one
migrated once per test process. A server on a new file otherwise spends about a second of its start
migrating it (the 17 Alembic migrations, in a child process: see ``store/sql/_migrate.py``), on every
one of the suite's many servers; the migrations themselves are tested where they are the point
(tests/store/test_one_truth.py, tests/store/test_persistence.py, the replicas' and workers' processes
of tests/store/test_replicas.py, which start on their own files)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
import threading
from pathlib import Path

from sqlalchemy.engine import make_url

__all__ = ["seed"]

_lock = threading.Lock()
_template: Path | None = None


def seed(db_url: str) -> None:
    """Where ``db_url`` names a SQLite file not made yet, make it as a copy of a migrated store."""
    url = make_url(db_url)
    if url.get_backend_name() != "sqlite" or url.database in (None, "", ":memory:"):
        return
    target = Path(url.database)
    if target.exists() or not target.parent.is_dir():
        return
    shutil.copyfile(_migrated(), target)


def _migrated() -> Path:
    global _template
    with _lock:
        if _template is None:
            path = Path(tempfile.mkdtemp(prefix="responsa-schema-")) / "migrated.db"
            environment = {**os.environ, "RESPONSA_MIGRATE_URL": f"sqlite:///{path}"}
            subprocess.run([sys.executable, "-m", "responsa.store.sql._migrate"], env=environment, check=True)
            assert not Path(f"{path}-wal").exists(), "the migrated store left a write-ahead log behind"
            _template = path
        return _template
