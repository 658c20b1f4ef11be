"""Jobs the server runs for its whole lifetime at a fixed pace (retention sweep, orphan and cancel checks)."""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable

import anyio

from responsa.protocol import StorageUnavailable

__all__ = ["every"]

logger = logging.getLogger(__name__)


async def every(
    interval: float,
    job: Callable[[], Awaitable[object]],
    what: str,
    wake: Callable[[], Awaitable[object]] | None = None,
) -> None:
    """Run ``job`` now and then every ``interval`` seconds, forever; a failure is logged, and the next run
    goes on as planned. ``wake``: the next run comes as soon as it returns, if that is sooner."""
    while True:
        try:
            await job()
        except StorageUnavailable as error:  # the store says why (and /health too): no traceback each time
            logger.warning("%s failed: %s", what, error.reason)
        except Exception:
            logger.exception("%s failed", what)
        if wake is None:
            await anyio.sleep(interval)
            continue
        with anyio.move_on_after(interval):
            await wake()
