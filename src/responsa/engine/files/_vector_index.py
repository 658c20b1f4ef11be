"""Nearest chunks by embedding, and hybrid ranking with the keyword index.

The vectors live in the store (``chunk_vectors``, float32); each process keeps a vector store's
vectors in memory as one normalized matrix, reloaded when the store's fingerprint (how many vectors,
the newest chunk) changes, so a search is one matrix product. This is exact (brute force) search:
about 100,000 chunks of 384 dimensions per vector store stay in tens of milliseconds; sqlite-vec
cannot load into this Python's sqlite3 (no extension loading) and pgvector is not packaged here.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from typing import TYPE_CHECKING

from responsa.store import VectorStoreRepository

if TYPE_CHECKING:  # numpy is imported where vectors are handled: a server without them does not carry it
    import numpy as np

__all__ = ["Embedder", "VectorIndex", "fuse", "pack"]

Embedder = Callable[[Sequence[str]], Awaitable[list[list[float]]]]
"""Texts in, one vector each out (an upstream's ``/v1/embeddings``)."""

RRF_K = 60
"""Reciprocal rank fusion's constant: a result's share is 1 / (60 + its rank) in each list."""


def pack(vector: Sequence[float]) -> bytes:
    import numpy as np

    return np.asarray(vector, dtype="<f4").tobytes()


def fuse(*rankings: Sequence[int]) -> list[tuple[int, float]]:
    """Chunk ids of several best-first lists, by reciprocal rank fusion, with a score from 0 to 1
    (1: first in every list)."""
    scores: dict[int, float] = {}
    for ranking in rankings:
        for rank, chunk_id in enumerate(ranking):
            scores[chunk_id] = scores.get(chunk_id, 0.0) + 1 / (RRF_K + rank + 1)
    best = len(rankings) / (RRF_K + 1)
    return sorted(((chunk_id, score / best) for chunk_id, score in scores.items()), key=lambda pair: -pair[1])


class VectorIndex:
    def __init__(self) -> None:
        self._loaded: dict[str, tuple[tuple[int, int], np.ndarray, np.ndarray]] = {}

    async def nearest(
        self, store: VectorStoreRepository, vector_store_id: str, query: Sequence[float], k: int
    ) -> list[int]:
        """The ``k`` chunk ids closest to ``query`` by cosine similarity, best first."""
        import numpy as np

        fingerprint = await store.vector_fingerprint(vector_store_id)
        if fingerprint[0] == 0:
            return []
        cached = self._loaded.get(vector_store_id)
        if cached is None or cached[0] != fingerprint:
            rows = await store.load_vectors(vector_store_id)
            ids = np.fromiter((chunk_id for chunk_id, _blob in rows), dtype=np.int64, count=len(rows))
            matrix = np.stack([np.frombuffer(blob, dtype="<f4") for _cid, blob in rows])
            matrix /= np.maximum(np.linalg.norm(matrix, axis=1, keepdims=True), 1e-12)
            cached = self._loaded[vector_store_id] = (fingerprint, ids, matrix)
        _fingerprint, ids, matrix = cached
        wanted = np.asarray(query, dtype=np.float32)
        if wanted.shape[0] != matrix.shape[1]:
            return []  # vectors of another embedding model
        similarity = matrix @ (wanted / max(float(np.linalg.norm(wanted)), 1e-12))
        take = min(k, len(ids))
        best = np.argpartition(-similarity, take - 1)[:take]
        best = best[np.argsort(-similarity[best])]
        return [int(ids[index]) for index in best if similarity[index] > 0]
