"""The files service: uploads streamed into the store part by part, listed, read back and deleted,
each tenant seeing only its own."""

from __future__ import annotations

import hashlib
import time
from collections.abc import AsyncIterator

from responsa.protocol import FILE_PURPOSES, FileObject, InvalidRequest, NotFound, PayloadTooLarge, new_id
from responsa.store import FileRepository, Order

from .._tenant_views import tenant_view

__all__ = ["MAX_EXPIRY_SECONDS", "MIN_EXPIRY_SECONDS", "FileService"]

MIN_EXPIRY_SECONDS = 3600
MAX_EXPIRY_SECONDS = 30 * 24 * 3600
"""``expires_after.seconds`` bounds, as OpenAI's (one hour to thirty days)."""


def _not_found(file_id: str) -> NotFound:
    return NotFound(f"No such File object: {file_id}", param="id")


class FileService:
    def __init__(self, store: FileRepository, max_bytes: int, part_bytes: int) -> None:
        self._store = store
        self.max_bytes = max_bytes
        self._part_bytes = part_bytes
        self._views: dict[str, FileService] = {}

    def for_tenant(self, tenant: str) -> FileService:
        return tenant_view(self._views, tenant, self._view)

    def _view(self, tenant: str) -> FileService:
        return FileService(self._store.scoped(tenant), self.max_bytes, self._part_bytes)

    async def upload(
        self, filename: str, purpose: str, chunks: AsyncIterator[bytes], expires_after: int | None = None
    ) -> FileObject:
        """Store the bytes ``chunks`` yield as a new file; it exists only once all of them are stored."""
        if purpose not in FILE_PURPOSES:
            raise InvalidRequest(
                f"Invalid value for 'purpose': {purpose!r}. Expected one of {', '.join(sorted(FILE_PURPOSES))}.",
                param="purpose",
                code="invalid_value",
            )
        if expires_after is not None and not MIN_EXPIRY_SECONDS <= expires_after <= MAX_EXPIRY_SECONDS:
            raise InvalidRequest(
                f"'expires_after[seconds]' must be between {MIN_EXPIRY_SECONDS} and {MAX_EXPIRY_SECONDS}.",
                param="expires_after[seconds]",
                code="invalid_value",
            )
        file_id = new_id("file", "-")  # OpenAI's file ids: file-...
        digest = hashlib.sha256()
        size = position = 0
        pending = bytearray()
        try:
            async for chunk in chunks:
                size += len(chunk)
                if size > self.max_bytes:
                    raise PayloadTooLarge(f"The file is larger than this server's limit of {self.max_bytes} bytes.")
                digest.update(chunk)
                pending += chunk
                while len(pending) >= self._part_bytes:
                    await self._store.write_file_part(file_id, position, bytes(pending[: self._part_bytes]))
                    del pending[: self._part_bytes]
                    position += 1
            if pending or position == 0:
                await self._store.write_file_part(file_id, position, bytes(pending))
            now = int(time.time())
            file = FileObject(
                id=file_id,
                bytes=size,
                created_at=now,
                filename=filename,
                purpose=purpose,
                expires_at=now + expires_after if expires_after is not None else None,
            )
            await self._store.commit_file(file, digest.hexdigest())
        except BaseException:
            await self._store.discard_file_parts(file_id)
            raise
        return file

    async def get(self, file_id: str) -> FileObject:
        file = await self._store.get_file(file_id)
        if file is None:
            raise _not_found(file_id)
        return file

    async def list(
        self, *, purpose: str | None, limit: int, order: Order, after: str | None
    ) -> tuple[list[FileObject], bool]:
        return await self._store.list_files(purpose=purpose, limit=limit, order=order, after=after)

    async def content(self, file_id: str) -> tuple[FileObject, AsyncIterator[bytes]]:
        """The file and its bytes, read from the store one part at a time as they are sent."""
        return await self.get(file_id), self.parts(file_id)

    async def parts(self, file_id: str) -> AsyncIterator[bytes]:
        """The file's bytes part by part (no tenant check: for files already checked)."""
        position = 0
        while (data := await self._store.file_part(file_id, position)) is not None:
            yield data
            position += 1

    async def name(self, file_id: str) -> str:
        """The name the file was uploaded with (no tenant check: for files already checked)."""
        return await self._store.file_name(file_id) or ""

    async def delete(self, file_id: str) -> None:
        if not await self._store.delete_file(file_id):
            raise _not_found(file_id)
