"""Containers and their files in the SQL store: the rows that list them. A container's bytes (its
directory) and its Python live on the machine that runs it; these rows are what survives a restart,
so a container the server acknowledged can always be found, and expired when its time comes."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import orjson
from sqlalchemy import delete, insert, select, update

from responsa.protocol import ContainerExpiry, ContainerFileObject, ContainerObject

from .._base import Order
from ._database import Database, Sql
from ._paging import keyed_page
from ._tables import container_file_parts, container_files, container_skill_files, containers

__all__ = ["SqlContainers"]

_c, _f, _p, _k = containers.c, container_files.c, container_file_parts.c, container_skill_files.c
_CONTAINER = (_c.id, _c.name, _c.created_at, _c.last_active_at, _c.expires_after_minutes, _c.memory_limit, _c.status,
              _c.network_policy)  # fmt: skip
_FILE = (_f.id, _f.container_id, _f.path, _f.bytes, _f.source, _f.created_at)


def _container_of(row: Any) -> ContainerObject:
    container_id, name, created_at, last_active_at, minutes, memory_limit, status, policy = row
    network = orjson.loads(policy) if policy else {"type": "disabled"}
    return ContainerObject(id=container_id, name=name, created_at=created_at, last_active_at=last_active_at,
                           expires_after=ContainerExpiry(minutes=minutes), memory_limit=memory_limit,
                           status=status, network_policy=network)  # fmt: skip


def _file_of(row: Any) -> ContainerFileObject:
    file_id, container_id, path, size, source, created_at = row
    return ContainerFileObject(id=file_id, container_id=container_id, path=path, bytes=size, source=source,
                               created_at=created_at)  # fmt: skip


class SqlContainers:
    """:class:`ContainerRepository` on the SQL store's database."""

    def __init__(self, db: Database, tenant: str = "default") -> None:
        self._db = db
        self.tenant = tenant

    def scoped(self, tenant: str) -> SqlContainers:
        return SqlContainers(self._db, tenant)

    async def create_container(self, container: ContainerObject) -> None:
        row = {"id": container.id, "tenant": self.tenant, "name": container.name, "created_at": container.created_at,
               "last_active_at": container.last_active_at, "expires_after_minutes": container.expires_after.minutes,
               "memory_limit": container.memory_limit, "status": container.status,
               "network_policy": orjson.dumps(container.network_policy).decode()
               if container.network_policy.get("type") != "disabled" else None}  # fmt: skip
        await self._db.write(lambda conn: conn.execute(insert(containers), [row]))

    async def get_container(self, container_id: str) -> ContainerObject | None:
        query = select(*_CONTAINER).where(_c.id == container_id, _c.tenant == self.tenant)
        row = await self._db.read(lambda conn: conn.execute(query).first())
        return None if row is None else _container_of(row)

    async def list_containers(
        self, *, limit: int, order: Order, after: str | None, name: str | None
    ) -> tuple[list[ContainerObject], bool]:
        query = select(*_CONTAINER).where(_c.tenant == self.tenant)
        if name is not None:
            query = query.where(_c.name == name)
        page = keyed_page(query, _c.id, limit=limit, order=order, after=after, before=None)
        rows = await self._db.read(lambda conn: conn.execute(page).all())
        return [_container_of(row) for row in rows[:limit]], len(rows) > limit

    async def touch_container(self, container_id: str, at: int) -> None:
        change = update(containers).where(_c.id == container_id).values(last_active_at=at)
        await self._db.write(lambda conn: conn.execute(change))

    async def claim_container_python(self, container_id: str, python: str) -> str | None:
        query = select(_c.python).where(_c.id == container_id, _c.tenant == self.tenant)
        change = update(containers).where(_c.id == container_id, _c.tenant == self.tenant).values(python=python)

        def work(conn: Sql) -> str | None:
            before: str | None = conn.execute(query).scalar()
            conn.execute(change)
            return before

        return await self._db.write(work)

    async def container_pythons(self, container_ids: list[str]) -> dict[str, str | None]:
        query = select(_c.id, _c.python).where(_c.id.in_(container_ids), _c.status == "running")
        rows = await self._db.read(lambda conn: conn.execute(query).all())
        return {container_id: python for container_id, python in rows}

    async def expire_container(self, container_id: str) -> None:
        def work(conn: Sql) -> None:
            conn.execute(update(containers).where(_c.id == container_id).values(status="expired"))
            conn.execute(delete(container_files).where(_f.container_id == container_id))
            conn.execute(delete(container_file_parts).where(_p.container_id == container_id))
            conn.execute(delete(container_skill_files).where(_k.container_id == container_id))

        await self._db.write(work)

    async def delete_container(self, container_id: str) -> bool:
        def work(conn: Sql) -> bool:
            gone = conn.execute(delete(containers).where(_c.id == container_id, _c.tenant == self.tenant))
            if gone.rowcount == 0:
                return False
            conn.execute(delete(container_files).where(_f.container_id == container_id))
            conn.execute(delete(container_file_parts).where(_p.container_id == container_id))
            conn.execute(delete(container_skill_files).where(_k.container_id == container_id))
            return True

        return await self._db.write(work)

    async def put_container_skills(self, container_id: str, skills: Mapping[str, Mapping[str, bytes]]) -> None:
        rows = [{"container_id": container_id, "skill": name, "path": path, "data": data}
                for name, files in skills.items() for path, data in files.items()]  # fmt: skip

        def work(conn: Sql) -> None:
            replaced = delete(container_skill_files).where(_k.container_id == container_id, _k.skill.in_(list(skills)))
            conn.execute(replaced)
            if rows:
                conn.execute(insert(container_skill_files), rows)

        await self._db.write(work)

    async def container_skills(self, container_id: str) -> dict[str, dict[str, bytes]]:
        query = select(_k.skill, _k.path, _k.data).where(_k.container_id == container_id)
        rows = await self._db.read(lambda conn: conn.execute(query).all())
        found: dict[str, dict[str, bytes]] = {}
        for skill, path, data in rows:
            found.setdefault(skill, {})[path] = bytes(data)
        return found

    async def idle_containers(self, now: int) -> list[tuple[str, str]]:
        query = select(_c.tenant, _c.id).where(_c.status == "running",
                                               _c.last_active_at + _c.expires_after_minutes * 60 <= now)  # fmt: skip
        rows = await self._db.read(lambda conn: conn.execute(query).all())
        return [(tenant, container_id) for tenant, container_id in rows]

    async def add_container_file(self, file: ContainerFileObject) -> None:
        row = {"id": file.id, "container_id": file.container_id, "path": file.path, "bytes": file.bytes,
               "source": file.source, "created_at": file.created_at}  # fmt: skip
        await self._db.write(lambda conn: conn.execute(insert(container_files), [row]))

    async def resize_container_file(self, file_id: str, size: int) -> None:
        change = update(container_files).where(_f.id == file_id).values(bytes=size)
        await self._db.write(lambda conn: conn.execute(change))

    async def get_container_file(self, container_id: str, file_id: str) -> ContainerFileObject | None:
        query = select(*_FILE).where(_f.container_id == container_id, _f.id == file_id)
        row = await self._db.read(lambda conn: conn.execute(query).first())
        return None if row is None else _file_of(row)

    async def container_files_by_path(self, container_id: str) -> dict[str, ContainerFileObject]:
        query = select(*_FILE).where(_f.container_id == container_id)
        rows = await self._db.read(lambda conn: conn.execute(query).all())
        return {file.path: file for file in map(_file_of, rows)}

    async def list_container_files(
        self, container_id: str, *, limit: int, order: Order, after: str | None
    ) -> tuple[list[ContainerFileObject], bool]:
        query = select(*_FILE).where(_f.container_id == container_id)
        page = keyed_page(query, _f.id, limit=limit, order=order, after=after, before=None)
        rows = await self._db.read(lambda conn: conn.execute(page).all())
        return [_file_of(row) for row in rows[:limit]], len(rows) > limit

    async def delete_container_files(self, container_id: str, file_ids: list[str]) -> int:
        if not file_ids:
            return 0
        gone = delete(container_files).where(_f.container_id == container_id, _f.id.in_(file_ids))
        parts = delete(container_file_parts).where(_p.container_id == container_id, _p.file_id.in_(file_ids))

        def work(conn: Sql) -> int:
            conn.execute(parts)
            count: int = conn.execute(gone).rowcount
            return count

        return await self._db.write(work)

    async def put_container_file_bytes(self, container_id: str, file_id: str, parts: list[bytes]) -> None:
        rows = [{"file_id": file_id, "position": position, "container_id": container_id, "data": data}
                for position, data in enumerate(parts)]  # fmt: skip

        def work(conn: Sql) -> None:
            conn.execute(delete(container_file_parts).where(_p.file_id == file_id))
            if rows:
                conn.execute(insert(container_file_parts), rows)

        await self._db.write(work)

    async def container_file_part(self, file_id: str, position: int) -> bytes | None:
        query = select(_p.data).where(_p.file_id == file_id, _p.position == position)
        data: bytes | None = await self._db.read(lambda conn: conn.execute(query).scalar())
        return data
