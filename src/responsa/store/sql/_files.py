"""File queries of the SQL store (mixed into :class:`~responsa.store.SqlStore`).

A file's bytes live in the store itself, in parts of at most ``PART_BYTES``, so every replica sees
every file and neither an upload nor a download holds a whole file in memory. The parts are written
first, one transaction each; the file's row is written last and is the upload's commit point.
"""

from __future__ import annotations

import hashlib
import time
from collections.abc import Callable
from typing import Any

from sqlalchemy import delete, insert, select

from responsa.protocol import FileObject

from .._base import PART_BYTES, Order
from ._database import Database, Sql
from ._paging import keyed_page
from ._tables import file_parts, files

__all__ = ["SqlFiles", "write_whole_file"]

ABANDONED_AFTER = 3600.0
"""Seconds after which parts with no file row (an upload that never finished) are removed."""

_f, _p = files.c, file_parts.c


_FILE_COLUMNS = (_f.id, _f.bytes, _f.created_at, _f.expires_at, _f.filename, _f.purpose)


def _file_of(row: Any) -> FileObject:
    file_id, size, created_at, expires_at, filename, purpose = row  # rows are plain tuples on SQLite
    return FileObject(
        id=file_id, bytes=size, created_at=created_at, expires_at=expires_at, filename=filename, purpose=purpose
    )


def _file_row(tenant: str, file: FileObject, sha256: str) -> dict[str, Any]:
    return {"id": file.id, "tenant": tenant, "created_at": file.created_at, "expires_at": file.expires_at,
            "purpose": file.purpose, "filename": file.filename, "bytes": file.bytes, "sha256": sha256}  # fmt: skip


def write_whole_file(conn: Sql, tenant: str, file: FileObject, data: bytes) -> None:
    """A file the server made (a batch's output), its parts and its row, in the caller's transaction."""
    parts = [data[start : start + PART_BYTES] for start in range(0, len(data), PART_BYTES)] or [b""]
    now = time.time()
    conn.execute(insert(file_parts), [{"file_id": file.id, "position": position, "data": part, "written_at": now}
                                      for position, part in enumerate(parts)])  # fmt: skip
    conn.execute(insert(files), [_file_row(tenant, file, hashlib.sha256(data).hexdigest())])


class SqlFiles:
    """The files of ``tenant``, their rows and their bytes in parts, on the store's database.
    ``purge`` removes a deleted file from every vector store, in the same transaction (the vector
    stores' repository does it)."""

    def __init__(self, db: Database, tenant: str, purge: Callable[[Sql, str], None]) -> None:
        self._db = db
        self.tenant = tenant
        self._delete_file_everywhere = purge

    def scoped(self, tenant: str) -> SqlFiles:
        return SqlFiles(self._db, tenant, self._delete_file_everywhere)

    def _visible(self, now: float | None = None) -> Any:
        """This tenant's files that have not expired."""
        moment = int(now if now is not None else time.time())
        return (_f.tenant == self.tenant) & (_f.expires_at.is_(None) | (_f.expires_at > moment))

    async def write_file_part(self, file_id: str, position: int, data: bytes) -> None:
        row = {"file_id": file_id, "position": position, "data": data, "written_at": time.time()}
        await self._db.write(lambda conn: conn.execute(insert(file_parts), [row]))

    async def commit_file(self, file: FileObject, sha256: str) -> None:
        """Write the file's row: from now on it is listed, readable and counted as uploaded."""
        row = _file_row(self.tenant, file, sha256)
        await self._db.write(lambda conn: conn.execute(insert(files), [row]))

    async def discard_file_parts(self, file_id: str) -> None:
        await self._db.write(lambda conn: conn.execute(delete(file_parts).where(_p.file_id == file_id)))

    async def get_file(self, file_id: str) -> FileObject | None:
        query = select(*_FILE_COLUMNS).where(_f.id == file_id, self._visible())
        row = await self._db.read(lambda conn: conn.execute(query).first())
        return None if row is None else _file_of(row)

    async def list_files(
        self, *, purpose: str | None, limit: int, order: Order, after: str | None
    ) -> tuple[list[FileObject], bool]:
        """One page of this tenant's files in id (creation) order, and whether more follow."""
        query = select(*_FILE_COLUMNS).where(self._visible())
        if purpose is not None:
            query = query.where(_f.purpose == purpose)
        page = keyed_page(query, _f.id, limit=limit, order=order, after=after, before=None)
        rows = await self._db.read(lambda conn: conn.execute(page).all())
        return [_file_of(row) for row in rows[:limit]], len(rows) > limit

    async def file_name(self, file_id: str) -> str | None:
        """The name a file was uploaded with, whatever its tenant (for ingestion, already checked)."""
        return await self._db.read(lambda conn: conn.execute(select(_f.filename).where(_f.id == file_id)).scalar())

    async def file_part(self, file_id: str, position: int) -> bytes | None:
        """The ``position``-th part of a file (its bytes are read part by part, never whole)."""
        query = select(_p.data).where(_p.file_id == file_id, _p.position == position)
        data = await self._db.read(lambda conn: conn.execute(query).scalar())
        return None if data is None else bytes(data)

    async def delete_file(self, file_id: str) -> bool:
        """Delete the file and its bytes; False if this tenant has no such file."""

        def work(conn: Sql) -> bool:
            if conn.execute(delete(files).where(_f.id == file_id, _f.tenant == self.tenant)).rowcount == 0:
                return False
            conn.execute(delete(file_parts).where(_p.file_id == file_id))
            self._delete_file_everywhere(conn, file_id)
            return True

        return await self._db.write(work)

    def sweep(self, conn: Sql) -> int:
        """Expired files with their bytes, and the parts of uploads abandoned an hour ago."""
        now = time.time()
        expired = list(conn.execute(select(_f.id).where(_f.expires_at <= int(now))).scalars())
        if expired:
            conn.execute(delete(files).where(_f.id.in_(expired)))
            conn.execute(delete(file_parts).where(_p.file_id.in_(expired)))
            for file_id in expired:
                self._delete_file_everywhere(conn, file_id)
        orphans = (
            select(_p.file_id)
            .where(_p.written_at < now - ABANDONED_AFTER, _p.file_id.not_in(select(_f.id)))
            .group_by(_p.file_id)
        )
        abandoned = list(conn.execute(orphans).scalars())
        if abandoned:
            conn.execute(delete(file_parts).where(_p.file_id.in_(abandoned)))
        return len(expired) + len(abandoned)
