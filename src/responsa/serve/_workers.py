"""What the workers of one ``responsa serve --workers N`` share besides the store, set up by the parent
before the first worker starts: the store migrated once, the key that seals compaction items (made
once, so an item made by one worker opens on every other), a directory for the rate-limit buckets
(``SharedRateLimiter``), for each worker's published metrics (one ``/metrics`` sums them), for the
sockets by which workers tell each other of cancels (``_neighbours``) and for the socket of the model
process serving the embedded models to all of them (``_model_process``), removed when the server
stops; and what the installation's probes found (``probe_installation``), probed once for all."""

from __future__ import annotations

import asyncio
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from responsa.config import Settings
from responsa.protocol import Capability
from responsa.store import SqlStore

from ._capabilities import probe_installation
from ._model_process import ModelProcess, has_embedded
from ._secret import secret_key

__all__ = ["WorkerGroup", "worker_group"]


@dataclass(frozen=True)
class WorkerGroup:
    """The workers of one server on this machine: how many, and the directory they share."""

    directory: Path
    size: int
    secret: bytes
    """The key that seals what clients hand back (``_secret.secret_key``), the same in every worker."""
    models_socket: Path | None = None
    """Where the model process serves the embedded models (None: there are none)."""
    installed: tuple[Capability, ...] = ()
    """What the installation's probes found in the parent (each worker reports it as its own)."""

    @property
    def limits_file(self) -> Path:
        return self.directory / "rate-limits"

    @property
    def metrics_directory(self) -> Path:
        return self.directory / "metrics"

    @property
    def neighbours_directory(self) -> Path:
        return self.directory / "neighbours"


@contextmanager
def worker_group(settings: Settings, size: int) -> Iterator[WorkerGroup]:
    """The group's shared directory (and its model process) for as long as the server runs."""
    asyncio.run(_migrate(settings.db_url))
    installed = tuple(asyncio.run(probe_installation(settings)))
    with tempfile.TemporaryDirectory(prefix="responsa-workers-") as directory:
        models = ModelProcess(settings, Path(directory) / "models.sock") if has_embedded(settings) else None
        socket = None if models is None else models.path
        group = WorkerGroup(Path(directory), size, secret_key(settings), socket, installed)
        group.metrics_directory.mkdir()
        group.neighbours_directory.mkdir()
        if models is not None:
            models.start()
        try:
            yield group
        finally:
            if models is not None:
                models.stop()


async def _migrate(db_url: str) -> None:
    """Bring the store to the newest schema once, before N workers would each try."""
    store = SqlStore(db_url)
    try:
        await store.migrate()
    finally:
        await store.aclose()
