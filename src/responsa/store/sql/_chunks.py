"""Chunk queries of the SQL store: keyword search on the database's own full-text index (SQLite FTS5,
PostgreSQL tsvector), the chunks' vectors, and removing chunks with their index entries and vectors."""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

import orjson
from sqlalchemy import delete, func, select, text

from .._vector_store_repository import ChunkHit
from ._database import Database, Sql
from ._tables import chunk_vectors, chunks, files, vector_store_files

__all__ = ["SqlChunks"]

_c, _cv, _vf = chunks.c, chunk_vectors.c, vector_store_files.c
_WORD = re.compile(r"\w+")

_SQLITE_SEARCH = text(
    "SELECT c.id, c.file_id, c.text, -chunks_fts.rank AS relevance "
    "FROM chunks_fts JOIN chunks c ON c.id = chunks_fts.rowid "
    "WHERE chunks_fts MATCH :query AND c.vector_store_id = :store ORDER BY chunks_fts.rank LIMIT :limit"
)
_POSTGRES_SEARCH = text(
    "SELECT id, file_id, text, ts_rank(tsv, q) AS rank FROM chunks, to_tsquery('english', :query) q "
    "WHERE vector_store_id = :store AND tsv @@ q ORDER BY rank DESC LIMIT :limit"
)


class SqlChunks:
    """The chunks and vectors of vector stores' files: keyword search in the database's own index (FTS5
    on SQLite, tsvector on PostgreSQL), vectors for the engine's index. No tenant: the vector stores'
    repository asks for its own stores' chunks only."""

    def __init__(self, db: Database, url: str) -> None:
        self._db = db
        self._url = url

    async def search_chunks(self, vector_store_id: str, query: str, limit: int) -> list[ChunkHit]:
        """The best ``limit`` chunks for ``query``'s words (any of them), best first."""
        words = _WORD.findall(query.lower())
        if not words:
            return []
        if self.sqlite:
            statement, expression = _SQLITE_SEARCH, " OR ".join(f'"{word}"' for word in words)
        else:
            statement, expression = _POSTGRES_SEARCH, " | ".join(words)
        where = {"query": expression, "store": vector_store_id, "limit": limit}
        rows = await self._db.read(lambda conn: conn.execute(statement, where).all())
        return [ChunkHit(cid, file_id, chunk, float(rank) / (float(rank) + 1)) for cid, file_id, chunk, rank in rows]

    async def searchable_files(
        self, vector_store_id: str, file_ids: Sequence[str]
    ) -> dict[str, tuple[str, dict[str, Any] | None]]:
        """Name and attributes of each of ``file_ids`` that is ingested in the store (one query)."""
        if not file_ids:
            return {}
        query = (
            select(_vf.file_id, files.c.filename, _vf.attributes)
            .join(files, files.c.id == _vf.file_id)
            .where(_vf.vector_store_id == vector_store_id, _vf.status == "completed", _vf.file_id.in_(list(file_ids)))
        )
        rows = await self._db.read(lambda conn: conn.execute(query).all())
        return {file_id: (name, attributes and orjson.loads(attributes)) for file_id, name, attributes in rows}

    async def vector_fingerprint(self, vector_store_id: str) -> tuple[int, int]:
        """(how many vectors, the newest chunk id): changes whenever the store's vectors do."""
        query = select(func.count(), func.coalesce(func.max(_cv.chunk_id), 0)).where(
            _cv.vector_store_id == vector_store_id
        )
        count, newest = await self._db.read(lambda conn: conn.execute(query).first())
        return int(count), int(newest)

    async def load_vectors(self, vector_store_id: str) -> list[tuple[int, bytes]]:
        query = select(_cv.chunk_id, _cv.vector).where(_cv.vector_store_id == vector_store_id).order_by(_cv.chunk_id)
        return [(int(cid), bytes(blob)) for cid, blob in await self._db.read(lambda conn: conn.execute(query).all())]

    async def chunks_by_id(self, chunk_ids: Sequence[int]) -> dict[int, tuple[str, str]]:
        """(file id, text) of each chunk that still exists."""
        if not chunk_ids:
            return {}
        query = select(_c.id, _c.file_id, _c.text).where(_c.id.in_(list(chunk_ids)))
        return {
            cid: (file_id, body) for cid, file_id, body in await self._db.read(lambda conn: conn.execute(query).all())
        }

    @property
    def sqlite(self) -> bool:
        return self._url.startswith("sqlite")

    def delete_chunks(self, conn: Sql, vector_store_id: str, file_id: str | None) -> None:
        where = _c.vector_store_id == vector_store_id
        if file_id is not None:
            where &= _c.file_id == file_id
        if self.sqlite:
            scope = "WHERE vector_store_id = :store" + (" AND file_id = :file" if file_id is not None else "")
            conn.execute(
                text(f"INSERT INTO chunks_fts(chunks_fts, rowid, text) SELECT 'delete', id, text FROM chunks {scope}"),
                {"store": vector_store_id, "file": file_id},
            )
        conn.execute(delete(chunk_vectors).where(_cv.chunk_id.in_(select(_c.id).where(where))))
        conn.execute(delete(chunks).where(where))
