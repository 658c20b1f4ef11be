"""What the server-run tools need made at start that is not theirs alone: the search provider (probed
at start) and the containers (served by ``/v1/containers`` too), each with what ``/v1/server`` says."""

from __future__ import annotations

import logging
import tempfile
from pathlib import Path
from typing import Any

import anyio
from platformdirs import user_data_dir
from sqlalchemy.engine import make_url

from responsa.config import Settings
from responsa.engine import ContainerService, FileService
from responsa.engine.containers import container_egress
from responsa.external import (
    SandboxLimits,
    SearchProvider,
    cgroups_writable,
    make_provider,
    sweep_cgroups,
)
from responsa.protocol import Capability
from responsa.store import SqlStore

__all__ = ["containers_service", "search_provider"]

logger = logging.getLogger(__name__)


def search_provider(settings: Settings) -> SearchProvider | None:
    """The provider ``--web-search`` names; one that is misconfigured (no URL, no key) stops the start."""
    if settings.web_search is None:
        return None
    keys = {"brave": settings.brave_api_key, "tavily": settings.tavily_api_key}
    try:
        return make_provider(settings.web_search, keys)
    except ValueError as exc:
        raise RuntimeError(str(exc)) from exc


def _containers_root(settings: Settings) -> Path:
    """``--containers-dir``, else ``containers/`` beside a SQLite file, else in the user data dir."""
    if settings.containers_dir is not None:
        return settings.containers_dir
    url = make_url(settings.db_url)
    if url.get_backend_name() == "sqlite":
        if url.database in (None, "", ":memory:"):
            return Path(tempfile.mkdtemp(prefix="responsa-containers-"))  # a store that dies with the process
        return Path(url.database).parent / "containers"
    return Path(user_data_dir("responsa")) / "containers"


async def containers_service(
    settings: Settings, store: SqlStore, files: FileService, sandbox: Capability
) -> tuple[ContainerService, dict[str, Any]]:
    """The containers, with code running only where the sandbox probed at start can run it (the start-up
    log said why not)."""
    why = None if sandbox.on else sandbox.detail
    if why is None and (removed := await anyio.to_thread.run_sync(sweep_cgroups)):
        logger.info("removed %d sandbox cgroups a stopped server left behind", removed)
    limits = SandboxLimits(call_seconds=settings.code_timeout_secs)
    egress = container_egress(allow_loopback=not settings.api_keys)
    service = ContainerService(store.containers(), files, _containers_root(settings), limits, why, egress=egress)
    detail = "run by the server in sandboxed containers (bubblewrap)" if why is None else f"off: {why}"
    capped = cgroups_writable()
    if why is None and not capped:
        logger.warning("code_interpreter: no writable cgroups here: each process is capped, but not how many "
                       "processes a container runs (run as root, or delegate cgroup v1 pids and memory)")  # fmt: skip
    return service, {"enabled": why is None, "sandbox": "bubblewrap", "container_cgroups": capped, "detail": detail}
