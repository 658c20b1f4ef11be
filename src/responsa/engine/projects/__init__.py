"""Projects and their keys (the Admin API): who a bearer token speaks for, what its project may use,
and the service the admin routes call."""

from ._audit import DENIED, AuditTrail
from ._caller import CALLER_KEY
from ._directory import KeyDirectory, Principal, ProjectPolicy
from ._limit_table import DAY, MINUTE, LimitTable, RateLimits
from ._service import DEFAULT_PROJECT, ProjectService
from ._spending import SPEND_ALERT_EVENT

__all__ = [
    "CALLER_KEY",
    "DAY",
    "DEFAULT_PROJECT",
    "DENIED",
    "MINUTE",
    "SPEND_ALERT_EVENT",
    "AuditTrail",
    "KeyDirectory",
    "LimitTable",
    "Principal",
    "ProjectPolicy",
    "ProjectService",
    "RateLimits",
]
