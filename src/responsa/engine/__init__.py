"""The engine: request checking, context rebuilding, the output state machine and the service."""

from ._accumulate import OutputBuilder
from ._compaction import Compactor
from ._containers import ContainerService
from ._conversations import ConversationService
from ._documents import probe_pdf_text
from ._files import FileService
from ._periodic import every
from ._prompts import PromptLibrary
from ._run import Run
from ._sealing import Sealer
from ._service import ResponseService
from ._vector_index import Embedder
from ._vector_stores import VectorStoreService, batch_body, file_body, vector_store_body
from .tools.image_generation import DEFAULT_MODEL as DEFAULT_IMAGES_MODEL

__all__ = [
    "DEFAULT_IMAGES_MODEL",
    "Compactor",
    "ContainerService",
    "ConversationService",
    "Embedder",
    "FileService",
    "OutputBuilder",
    "PromptLibrary",
    "ResponseService",
    "Run",
    "Sealer",
    "VectorStoreService",
    "batch_body",
    "every",
    "file_body",
    "probe_pdf_text",
    "vector_store_body",
]
