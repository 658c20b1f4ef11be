"""What the workers of one ``responsa serve --workers N`` share besides the store, set up by the parent
before the first worker starts: the store migrated once, a directory for the rate-limit buckets
(``SharedRateLimiter``) and for prometheus_client's per-process metric files (one ``/metrics`` sums
them), removed when the server stops."""

from __future__ import annotations

import asyncio
import os
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from responsa.config import Settings
from responsa.store import SqlStore

__all__ = ["WorkerGroup", "worker_group"]


@dataclass(frozen=True)
class WorkerGroup:
    """The workers of one server on this machine: how many, and the directory they share."""

    directory: Path
    size: int

    @property
    def limits_file(self) -> Path:
        return self.directory / "rate-limits"

    @property
    def metrics_directory(self) -> Path:
        return self.directory / "metrics"


@contextmanager
def worker_group(settings: Settings, size: int) -> Iterator[WorkerGroup]:
    """The group's shared directory for as long as the server runs. prometheus_client chooses its
    per-process files when it is imported, from the environment: set here, the workers inherit it."""
    asyncio.run(_migrate(settings.db_url))
    with tempfile.TemporaryDirectory(prefix="responsa-workers-") as directory:
        group = WorkerGroup(Path(directory), size)
        group.metrics_directory.mkdir()
        os.environ["PROMETHEUS_MULTIPROC_DIR"] = str(group.metrics_directory)
        yield group


async def _migrate(db_url: str) -> None:
    """Bring the store to the newest schema once, before N workers would each try."""
    store = SqlStore(db_url)
    try:
        await store.migrate()
    finally:
        await store.aclose()
