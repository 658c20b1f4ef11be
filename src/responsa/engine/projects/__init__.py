"""Projects and their keys (the Admin API): who a bearer token speaks for, what its project may use,
and the service the admin routes call."""

from ._directory import CALLER_KEY, KeyDirectory, Principal, ProjectPolicy
from ._service import DEFAULT_PROJECT, ProjectService

__all__ = ["CALLER_KEY", "DEFAULT_PROJECT", "KeyDirectory", "Principal", "ProjectPolicy", "ProjectService"]
