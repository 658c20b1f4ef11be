"""Files, the text extracted from documents, vector stores and their index: what ``/v1/files`` and
``/v1/vector_stores`` serve and the file search reads."""

from ._attribute_filters import check_filter, matches
from ._documents import UnsupportedFile, extract_text, probe_pdf_text
from ._embeddings import EmbeddingService
from ._files import FileService
from ._vector_index import Embedder
from ._vector_stores import VectorStoreService, batch_body, file_body, vector_store_body

__all__ = [
    "Embedder",
    "EmbeddingService",
    "FileService",
    "UnsupportedFile",
    "VectorStoreService",
    "batch_body",
    "check_filter",
    "extract_text",
    "file_body",
    "matches",
    "probe_pdf_text",
    "vector_store_body",
]
