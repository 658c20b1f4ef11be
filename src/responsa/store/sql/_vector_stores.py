"""Vector store queries of the SQL store (mixed into :class:`~responsa.store.SqlStore`): the stores,
their files, and keyword search over the files' chunks on the database's own full-text index."""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any

import orjson
from sqlalchemy import delete, func, insert, select, text, update

from .._base import Order
from .._vector_store_repository import ChunkHit, StoredBatch, StoredFile, StoredVectorStore
from ._chunks import SqlChunks
from ._database import Database, Sql
from ._paging import keyed_page
from ._tables import chunk_vectors, chunks, vector_store_file_batches, vector_store_files, vector_stores

__all__ = ["SqlVectorStores"]

_v, _vf, _c, _b = vector_stores.c, vector_store_files.c, chunks.c, vector_store_file_batches.c


def _counts(conn: Sql, where: Any) -> tuple[dict[str, int], int]:
    """Files by status, and the bytes their chunks hold."""
    counts = {"in_progress": 0, "completed": 0, "failed": 0, "cancelled": 0}
    usage = 0
    query = select(_vf.status, func.count(), func.coalesce(func.sum(_vf.usage_bytes), 0)).where(where)
    for status, count, used in conn.execute(query.group_by(_vf.status)):
        counts[status] = int(count)
        usage += int(used)
    return counts, usage


def _json(value: Any) -> str | None:
    return None if value is None else orjson.dumps(value).decode()


def _stored_file(row: Sequence[Any]) -> StoredFile:
    vs, file_id, created, status, error, attributes, chunking, usage = row
    return StoredFile(
        vs, file_id, created, status, error and orjson.loads(error), attributes and orjson.loads(attributes),
        orjson.loads(chunking), usage,
    )  # fmt: skip


_FILE_COLUMNS = (
    _vf.vector_store_id, _vf.file_id, _vf.created_at, _vf.status, _vf.last_error, _vf.attributes, _vf.chunking,
    _vf.usage_bytes,
)  # fmt: skip


class SqlVectorStores:
    """The vector stores of ``tenant``, their files as they are ingested and file batches, on the store's
    database; their chunks and vectors through :class:`SqlChunks`."""

    def __init__(self, db: Database, tenant: str, chunks: SqlChunks) -> None:
        self._db = db
        self.tenant = tenant
        self._chunks = chunks

    def scoped(self, tenant: str) -> SqlVectorStores:
        return SqlVectorStores(self._db, tenant, self._chunks)

    async def bytes_by_tenant(self) -> dict[str, int]:
        query = (select(_v.tenant, func.coalesce(func.sum(_vf.usage_bytes), 0))
                 .select_from(vector_stores.outerjoin(vector_store_files, _vf.vector_store_id == _v.id))
                 .group_by(_v.tenant))  # fmt: skip

        def work(conn: Sql) -> dict[str, int]:
            return {tenant: int(used) for tenant, used in conn.execute(query)}

        return await self._db.read(work)

    async def search_chunks(self, vector_store_id: str, query: str, limit: int) -> list[ChunkHit]:
        return await self._chunks.search_chunks(vector_store_id, query, limit)

    async def searchable_files(
        self, vector_store_id: str, file_ids: Sequence[str]
    ) -> dict[str, tuple[str, dict[str, Any] | None]]:
        return await self._chunks.searchable_files(vector_store_id, file_ids)

    async def vector_fingerprint(self, vector_store_id: str) -> tuple[int, int]:
        return await self._chunks.vector_fingerprint(vector_store_id)

    async def load_vectors(self, vector_store_id: str) -> list[tuple[int, bytes]]:
        return await self._chunks.load_vectors(vector_store_id)

    async def chunks_by_id(self, chunk_ids: Sequence[int]) -> dict[int, tuple[str, str]]:
        return await self._chunks.chunks_by_id(chunk_ids)

    def _mine(self, vector_store_id: str) -> Any:
        return (_v.id == vector_store_id) & (_v.tenant == self.tenant)

    async def create_vector_store(
        self, vector_store_id: str, name: str, metadata: dict[str, str], expires_after_days: int | None
    ) -> None:
        now = int(time.time())
        row = {
            "id": vector_store_id, "tenant": self.tenant, "created_at": now, "name": name,
            "metadata": orjson.dumps(metadata).decode(), "expires_after_days": expires_after_days,
            "last_active_at": now,
        }  # fmt: skip
        await self._db.write(lambda conn: conn.execute(insert(vector_stores), [row]))

    def _read_store(self, conn: Sql, row: Sequence[Any]) -> StoredVectorStore:
        vector_store_id, created, name, metadata, days, active = row
        counts, usage = _counts(conn, _vf.vector_store_id == vector_store_id)
        return StoredVectorStore(vector_store_id, created, name, orjson.loads(metadata), days, active, counts, usage)

    _STORE_COLUMNS = (_v.id, _v.created_at, _v.name, _v.metadata, _v.expires_after_days, _v.last_active_at)

    async def has_vector_store(self, vector_store_id: str) -> bool:
        query = select(_v.id).where(self._mine(vector_store_id))
        return await self._db.read(lambda conn: conn.execute(query).first()) is not None

    async def get_vector_store(self, vector_store_id: str) -> StoredVectorStore | None:
        def work(conn: Sql) -> StoredVectorStore | None:
            row = conn.execute(select(*self._STORE_COLUMNS).where(self._mine(vector_store_id))).first()
            return None if row is None else self._read_store(conn, row)

        return await self._db.read(work)

    async def list_vector_stores(
        self, *, limit: int, order: Order, after: str | None, before: str | None
    ) -> tuple[list[StoredVectorStore], bool]:
        mine = select(*self._STORE_COLUMNS).where(_v.tenant == self.tenant)
        query = keyed_page(mine, _v.id, limit=limit, order=order, after=after, before=before)

        def work(conn: Sql) -> tuple[list[StoredVectorStore], bool]:
            rows = conn.execute(query).all()
            return [self._read_store(conn, row) for row in rows[:limit]], len(rows) > limit

        return await self._db.read(work)

    async def update_vector_store(self, vector_store_id: str, changes: dict[str, Any]) -> bool:
        values = {**changes, "last_active_at": int(time.time())}
        if "metadata" in values:
            values["metadata"] = orjson.dumps(values["metadata"]).decode()
        statement = update(vector_stores).where(self._mine(vector_store_id)).values(**values)
        return bool(await self._db.write(lambda conn: conn.execute(statement).rowcount))

    async def delete_vector_store(self, vector_store_id: str) -> bool:
        """The store, its file links and every chunk of it (the files themselves stay)."""

        def work(conn: Sql) -> bool:
            if conn.execute(delete(vector_stores).where(self._mine(vector_store_id))).rowcount == 0:
                return False
            self._delete_contents(conn, vector_store_id)
            return True

        return await self._db.write(work)

    def _delete_contents(self, conn: Sql, vector_store_id: str) -> None:
        self._chunks.delete_chunks(conn, vector_store_id, None)
        conn.execute(delete(vector_store_files).where(_vf.vector_store_id == vector_store_id))
        conn.execute(delete(vector_store_file_batches).where(_b.vector_store_id == vector_store_id))

    def sweep(self, conn: Sql) -> int:
        """Stores past ``expires_after`` (days since they were last active), with their chunks."""
        deadline = _v.last_active_at + _v.expires_after_days * 86400
        expired = list(
            conn.execute(
                select(_v.id).where(_v.expires_after_days.is_not(None), deadline <= int(time.time()))
            ).scalars()
        )
        for vector_store_id in expired:
            conn.execute(delete(vector_stores).where(_v.id == vector_store_id))
            self._delete_contents(conn, vector_store_id)
        return len(expired)

    async def add_vector_store_file(
        self,
        vector_store_id: str,
        file_id: str,
        attributes: dict[str, Any] | None,
        chunking: dict[str, Any],
        batch_id: str | None = None,
    ) -> StoredFile:
        """Link the file (again: its chunks are dropped and it is queued for ingestion afresh)."""
        row = {
            "vector_store_id": vector_store_id, "file_id": file_id, "created_at": int(time.time()),
            "status": "in_progress", "last_error": None, "attributes": _json(attributes),
            "chunking": orjson.dumps(chunking).decode(), "usage_bytes": 0, "batch_id": batch_id,
        }  # fmt: skip

        def work(conn: Sql) -> None:
            self._chunks.delete_chunks(conn, vector_store_id, file_id)
            where = (_vf.vector_store_id == vector_store_id) & (_vf.file_id == file_id)
            conn.execute(delete(vector_store_files).where(where))
            conn.execute(insert(vector_store_files), [row])

        await self._db.write(work)
        return _stored_file([row[column.name] for column in _FILE_COLUMNS])

    async def get_vector_store_file(self, vector_store_id: str, file_id: str) -> StoredFile | None:
        query = select(*_FILE_COLUMNS).where(_vf.vector_store_id == vector_store_id, _vf.file_id == file_id)
        row = await self._db.read(lambda conn: conn.execute(query).first())
        return None if row is None else _stored_file(row)

    async def list_vector_store_files(
        self, vector_store_id: str, *, status: str | None, limit: int, order: Order, after: str | None,
        before: str | None, batch_id: str | None = None,
    ) -> tuple[list[StoredFile], bool]:  # fmt: skip
        query = select(*_FILE_COLUMNS).where(_vf.vector_store_id == vector_store_id)
        if batch_id is not None:
            query = query.where(_vf.batch_id == batch_id)
        if status is not None:
            query = query.where(_vf.status == status)
        page = keyed_page(query, _vf.file_id, limit=limit, order=order, after=after, before=before)
        rows = await self._db.read(lambda conn: conn.execute(page).all())
        return [_stored_file(row) for row in rows[:limit]], len(rows) > limit

    async def update_vector_store_file(self, vector_store_id: str, file_id: str, attributes: dict[str, Any]) -> bool:
        where = (_vf.vector_store_id == vector_store_id) & (_vf.file_id == file_id)
        statement = update(vector_store_files).where(where).values(attributes=_json(attributes))
        return bool(await self._db.write(lambda conn: conn.execute(statement).rowcount))

    async def remove_vector_store_file(self, vector_store_id: str, file_id: str) -> bool:
        def work(conn: Sql) -> bool:
            where = (_vf.vector_store_id == vector_store_id) & (_vf.file_id == file_id)
            if conn.execute(delete(vector_store_files).where(where)).rowcount == 0:
                return False
            self._chunks.delete_chunks(conn, vector_store_id, file_id)
            return True

        return await self._db.write(work)

    async def finish_ingestion(
        self,
        vector_store_id: str,
        file_id: str,
        texts: Sequence[str],
        error: dict[str, str] | None,
        vectors: Sequence[bytes] = (),
    ) -> bool:
        """Store the file's chunks and mark it completed (or failed with ``error``), in one transaction;
        False if the file was removed from the store meanwhile."""
        texts, vectors = tuple(texts), tuple(vectors)  # the write's own copies (it may wait for its batch)

        def work(conn: Sql) -> bool:
            where = (_vf.vector_store_id == vector_store_id) & (_vf.file_id == file_id) & (_vf.status == "in_progress")
            usage = sum(len(chunk.encode()) for chunk in texts)
            values = {"status": "failed" if error else "completed", "last_error": _json(error), "usage_bytes": usage}
            if conn.execute(update(vector_store_files).where(where).values(**values)).rowcount == 0:
                return False
            if texts:
                rows = [
                    {"vector_store_id": vector_store_id, "file_id": file_id, "position": i, "text": chunk}
                    for i, chunk in enumerate(texts)
                ]
                conn.execute(insert(chunks), rows)
                if vectors:
                    ids = conn.execute(
                        select(_c.id)
                        .where(_c.vector_store_id == vector_store_id, _c.file_id == file_id)
                        .order_by(_c.position)
                    ).scalars()
                    stored = [{"chunk_id": cid, "vector_store_id": vector_store_id, "vector": blob}
                              for cid, blob in zip(ids, vectors, strict=True)]  # fmt: skip
                    conn.execute(insert(chunk_vectors), stored)
                if self._chunks.sqlite:
                    conn.execute(
                        text(
                            "INSERT INTO chunks_fts(rowid, text) SELECT id, text FROM chunks "
                            "WHERE vector_store_id = :store AND file_id = :file"
                        ),
                        {"store": vector_store_id, "file": file_id},
                    )
            return True

        return await self._db.write(work)

    async def unfinished_ingestions(self) -> list[tuple[str, str]]:
        """(vector store, file) of every file still waiting to be ingested, in every tenant."""
        query = select(_vf.vector_store_id, _vf.file_id).where(_vf.status == "in_progress")
        return [tuple(row) for row in await self._db.read(lambda conn: conn.execute(query).all())]

    async def create_batch(self, batch_id: str, vector_store_id: str) -> None:
        row = {"id": batch_id, "vector_store_id": vector_store_id, "created_at": int(time.time()), "cancelled": False}
        await self._db.write(lambda conn: conn.execute(insert(vector_store_file_batches), [row]))

    async def get_batch(self, vector_store_id: str, batch_id: str) -> StoredBatch | None:
        def work(conn: Sql) -> StoredBatch | None:
            query = select(_b.created_at, _b.cancelled).where(_b.id == batch_id, _b.vector_store_id == vector_store_id)
            row = conn.execute(query).first()
            if row is None:
                return None
            counts, _usage = _counts(conn, _vf.batch_id == batch_id)
            return StoredBatch(batch_id, vector_store_id, row[0], bool(row[1]), counts)

        return await self._db.read(work)

    async def cancel_batch(self, vector_store_id: str, batch_id: str) -> None:
        """Files of the batch not yet ingested end ``cancelled`` (their ingestion's result is dropped)."""

        def work(conn: Sql) -> None:
            where = (_b.id == batch_id) & (_b.vector_store_id == vector_store_id)
            conn.execute(update(vector_store_file_batches).where(where).values(cancelled=True))
            waiting = (_vf.batch_id == batch_id) & (_vf.status == "in_progress")
            conn.execute(update(vector_store_files).where(waiting).values(status="cancelled"))

        await self._db.write(work)

    async def touch_vector_store(self, vector_store_id: str) -> None:
        statement = update(vector_stores).where(_v.id == vector_store_id).values(last_active_at=int(time.time()))
        await self._db.write(lambda conn: conn.execute(statement))

    def delete_file_everywhere(self, conn: Sql, file_id: str) -> None:
        """A deleted file leaves every vector store, chunks included."""
        stores = list(conn.execute(select(_vf.vector_store_id).where(_vf.file_id == file_id)).scalars())
        for vector_store_id in stores:
            self._chunks.delete_chunks(conn, vector_store_id, file_id)
        conn.execute(delete(vector_store_files).where(_vf.file_id == file_id))
