"""Jobs the server runs for its whole lifetime at a fixed pace (retention sweep, orphan and cancel checks)."""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable

import anyio

__all__ = ["every"]

logger = logging.getLogger(__name__)


async def every(interval: float, job: Callable[[], Awaitable[object]], what: str) -> None:
    """Run ``job`` now and then every ``interval`` seconds, forever; a failure is logged, and the next run
    goes on as planned."""
    while True:
        try:
            await job()
        except Exception:
            logger.exception("%s failed", what)
        await anyio.sleep(interval)
