"""The engine: request checking, context rebuilding, the output state machine and the service."""

from ._accumulate import OutputBuilder
from ._conversations import ConversationService
from ._periodic import every
from ._service import ResponseService, Run

__all__ = ["ConversationService", "OutputBuilder", "ResponseService", "Run", "every"]
