"""The Batch API: batches of requests run without a client waiting, below interactive traffic,
shared by every process of the store by lease."""

from ._lines import BATCH_RANK, BatchLines, Started
from ._runner import BatchRunner
from ._service import BatchService

__all__ = ["BATCH_RANK", "BatchLines", "BatchRunner", "BatchService", "Started"]
