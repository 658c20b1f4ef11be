"""Spend limits held and spend alerts sent: every few seconds, each limited or alerted project's spend
this month (its usage at the prices the server was given, as ``/v1/organization/costs`` counts it)
against its limit, and its alerts' thresholds. Past its limit, the key directory answers the
project's requests with 429s until the limit is raised or removed, or the month ends. An alert
passed fires once a month: the store marks it fired and announces ``project.spend_alert.triggered``
to the project's webhook endpoints in one transaction, so one process fires it. What a project may
overshoot by is what it spends between two looks (and in the other processes' last second not yet
written)."""

from __future__ import annotations

import time
from collections.abc import Callable
from datetime import UTC, datetime

from responsa.store import ProjectRepository

from ..projects import SPEND_ALERT_EVENT, KeyDirectory
from ._reports import UsageReports

__all__ = ["SpendWatch", "month_start"]


def month_start(now: float) -> int:
    """The first second of ``now``'s month (UTC), when spend limits start counting again."""
    day = datetime.fromtimestamp(now, UTC)
    return int(datetime(day.year, day.month, 1, tzinfo=UTC).timestamp())


class SpendWatch:
    def __init__(
        self,
        reports: UsageReports,
        directory: KeyDirectory,
        alerts: ProjectRepository,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self._reports = reports
        self._directory = directory
        self._alerts = alerts
        self._clock = clock

    async def check(self) -> None:
        """One look: which limited projects have spent their limit this month, and which alerts fire."""
        limits = self._directory.spend_limits()
        alerts = await self._alerts.list_alerts(None)
        watched = {*limits, *(alert.project_id for alert in alerts)}
        if not watched:
            self._directory.spent(frozenset())
            return
        month = month_start(self._clock())
        spent = await self._reports.spent(month, sorted(watched))
        self._directory.spent(frozenset(p for p, cents in limits.items() if spent.get(p, 0.0) * 100 >= cents))
        for alert in alerts:
            if (alert.fired_for or 0) < month and spent.get(alert.project_id, 0.0) * 100 >= alert.threshold_amount:
                await self._alerts.fire_alert(alert, month, SPEND_ALERT_EVENT)
