"""Spend limits held: every few seconds, each limited project's spend this month (its usage at the
prices the server was given, as ``/v1/organization/costs`` counts it) against its limit; the key
directory then answers its requests with 429s until the limit is raised or removed, or the month
ends. What a project may overshoot by is what it spends between two looks (and in the other
processes' last second not yet written)."""

from __future__ import annotations

import time
from collections.abc import Callable
from datetime import UTC, datetime

from ..projects import KeyDirectory
from ._reports import UsageReports

__all__ = ["SpendWatch", "month_start"]


def month_start(now: float) -> int:
    """The first second of ``now``'s month (UTC), when spend limits start counting again."""
    day = datetime.fromtimestamp(now, UTC)
    return int(datetime(day.year, day.month, 1, tzinfo=UTC).timestamp())


class SpendWatch:
    def __init__(self, reports: UsageReports, directory: KeyDirectory, clock: Callable[[], float] = time.time) -> None:
        self._reports = reports
        self._directory = directory
        self._clock = clock

    async def check(self) -> None:
        """One look: which limited projects have spent their limit this month."""
        limits = self._directory.spend_limits()
        if not limits:
            self._directory.spent(frozenset())
            return
        spent = await self._reports.spent(month_start(self._clock()), list(limits))
        self._directory.spent(frozenset(p for p, cents in limits.items() if spent.get(p, 0.0) * 100 >= cents))
