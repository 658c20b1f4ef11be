"""The engine: request checking, context rebuilding, the output state machine and the service."""

from ._accumulate import OutputBuilder
from ._compaction import Compactor
from ._conversations import ConversationService
from ._periodic import every
from ._run import Run
from ._sealing import Sealer
from ._service import ResponseService

__all__ = ["Compactor", "ConversationService", "OutputBuilder", "ResponseService", "Run", "Sealer", "every"]
