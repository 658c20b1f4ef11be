"""Files, the text extracted from documents, vector stores and their index: what ``/v1/files`` and
``/v1/vector_stores`` serve and the file search reads."""

from ._attribute_filters import check_filter, matches
from ._documents import probe_pdf_text
from ._embeddings import EmbeddingService
from ._files import FileService
from ._vector_index import Embedder
from ._vector_stores import VectorStoreService, batch_body, file_body, vector_store_body

__all__ = [
    "Embedder",
    "EmbeddingService",
    "FileService",
    "VectorStoreService",
    "batch_body",
    "check_filter",
    "file_body",
    "matches",
    "probe_pdf_text",
    "vector_store_body",
]
