"""Running the server: one process, or ``--workers`` processes on one port.

Workers are uvicorn's supervisor's: the parent binds the port and hands the socket to each worker; a
worker that dies is replaced, SIGTERM drains every worker (each finishes its requests within
``--shutdown-grace-secs``) and SIGHUP replaces them one at a time. What they share is set up here,
before the first starts (see :func:`responsa.serve.worker_group`)."""

from __future__ import annotations

import copy
import gc
import os
from functools import partial
from typing import Any

import click
import uvicorn
from starlette.applications import Starlette
from uvicorn.supervisors import Multiprocess

from responsa.config import Settings

from ._accepting import reuse_port_socket
from ._app import create_app
from ._parent import end_with_the_parent
from ._websocket_batches import BatchingWebSocketProtocol
from ._workers import WorkerGroup, worker_group

__all__ = ["WORKER_HEALTHCHECK_SECS", "connection_options", "serve_settings", "worker_app", "worker_count"]

WORKER_HEALTHCHECK_SECS = 30
"""How long the parent waits for a worker to answer its health check before it replaces it (uvicorn's
default is 5 s). A worker answers from a thread it starts once Python has imported what its app needs:
under load on a small machine that took more than 5 s, and starting workers were killed as hung and
started again (12 in one start of two replicas). A worker that really hangs is replaced 30 s on."""


def worker_count(settings: Settings) -> int:
    """``--workers``, with ``auto`` (0) as the cores this process may run on."""
    return settings.workers or len(os.sched_getaffinity(0))


def serve_settings(settings: Settings) -> None:
    """Serve until stopped, in as many processes as ``--workers`` says."""
    count = worker_count(settings)
    workers = f", {count} workers" if count > 1 else ""
    click.echo(f"responsa: serving on http://{settings.host}:{settings.port}/v1 (store: {settings.db_url}{workers})")
    options: dict[str, Any] = {
        "host": settings.host,
        "port": settings.port,
        "log_level": settings.log_level,
        "log_config": _log_config(settings.log_level),
        "access_log": False,  # responsa.access writes the line, with the request id and tenant
        "timeout_graceful_shutdown": max(int(settings.shutdown_grace_secs), 1),
        "loop": "responsa.serve._accepting:AcceptingLoop",
        **connection_options(settings),
    }
    if count == 1:
        app = create_app(settings)
        _tune_garbage_collector()
        config = uvicorn.Config(app, **options)
        uvicorn.Server(config).run(sockets=[config.bind_socket()])
        return
    with worker_group(settings, count) as group:
        config = uvicorn.Config(partial(worker_app, settings, group), factory=True, workers=count,
                                timeout_worker_healthcheck=WORKER_HEALTHCHECK_SECS, **options)  # fmt: skip
        Multiprocess(config, sockets=[reuse_port_socket(settings.host, settings.port)]).run()


def connection_options(settings: Settings) -> dict[str, Any]:
    """uvicorn's connection options as responsa serves them (the tests' live servers take them too):
    ``--keep-alive-secs``, and the WebSocket protocol with batched sends, per-message compression only
    with ``--ws-compression``."""
    return {
        "timeout_keep_alive": settings.keep_alive_secs,
        "ws": BatchingWebSocketProtocol,
        "ws_per_message_deflate": settings.ws_compression,
    }


def _log_config(level: str) -> dict[str, Any]:
    """uvicorn's logging, and responsa's loggers (``responsa.access``'s line per request among them) on
    its handler at ``--log-level``: the package adds no handlers, the server it runs in does."""
    config = copy.deepcopy(uvicorn.config.LOGGING_CONFIG)
    config["loggers"]["responsa"] = {"handlers": ["default"], "level": level.upper(), "propagate": False}
    return config


def worker_app(settings: Settings, group: WorkerGroup) -> Starlette:
    """One worker's app (what each worker calls, settings and group pickled to it), its collector tuned
    as a single process's is. A worker ends with the parent, even one killed outright."""
    end_with_the_parent()
    app = create_app(settings, group)
    _tune_garbage_collector()
    return app


def _tune_garbage_collector() -> None:
    """Set the collector for a long-running server. Everything made so far (modules, models, schemas)
    lives as long as the process: frozen, full collections never scan it again (they took 40 ms each
    under load). Young objects are collected every 50,000 allocations net of those freed, not 700:
    what a request allocates is freed by reference counting as it ends (the rig's runs left too little
    cyclic garbage to reach one collection in 6,000 streams), so a collection mostly walks the live
    objects of the requests in flight. At 10,000, 64 streams in flight held more than that: 9% of the
    CPU went to collections that freed nothing (3% at 16)."""
    gc.collect()
    gc.freeze()
    gc.set_threshold(50_000, 20, 20)
