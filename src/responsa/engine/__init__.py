"""The engine: request checking, context rebuilding, the output state machine and the service."""

from ._accumulate import OutputBuilder
from ._service import ResponseService, Run

__all__ = ["OutputBuilder", "ResponseService", "Run"]
