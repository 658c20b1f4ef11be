"""Usage: what each request used, counted by minute, hour and day in the store (the ledger), the
Admin API's usage and costs reports read from it, and the spend limits they hold projects to."""

from ._ledger import IN_BATCH, LATENCY_BOUNDS_MS, WIDTHS, UsageHook, UsageLedger, Used
from ._reports import REPORTS, UsageQuery, UsageReports
from ._spend import SpendWatch, month_start
from ._storage import StorageSampler

__all__ = [
    "IN_BATCH",
    "LATENCY_BOUNDS_MS",
    "REPORTS",
    "WIDTHS",
    "SpendWatch",
    "StorageSampler",
    "UsageHook",
    "UsageLedger",
    "UsageQuery",
    "UsageReports",
    "Used",
    "month_start",
]
