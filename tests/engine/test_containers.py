"""Containers expire after their idle time and release everything (their files, their Python); an
expired container answers as OpenAI's do. Idle time is made by moving ``last_active_at`` back, as an
hour of silence would."""

from __future__ import annotations

import time
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from responsa.engine import ContainerService, FileService
from responsa.external import SandboxLimits, probe_sandbox
from responsa.protocol import CreateContainerRequest, InvalidRequest
from responsa.store import PART_BYTES, SqlStore

pytestmark = pytest.mark.anyio


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def _replicas(store: SqlStore, tmp_path: Path) -> tuple[ContainerService, ContainerService]:
    """Tenant t's containers as two replicas see them: one store, each its own containers directory."""
    files = FileService(store.files(), 1024 * 1024, PART_BYTES)
    a, b = (ContainerService(store.containers(), files, tmp_path / place, SandboxLimits()).for_tenant("t")
            for place in ("a", "b"))  # fmt: skip
    return a, b


async def _idle(store: SqlStore) -> list[str]:
    return [container_id for _, container_id in await store.containers().idle_containers(int(time.time()))]


async def _bytes(data: bytes) -> AsyncIterator[bytes]:
    yield data


@pytest.fixture(params=["sqlite", "postgresql"])
def db_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'r.db'}"
    return str(request.getfixturevalue("postgres_url"))


async def test_an_idle_container_expires_and_releases_everything(db_url: str, tmp_path: Path) -> None:
    store = SqlStore(db_url)
    await store.migrate()
    try:
        files = FileService(store.files(), 1024 * 1024, PART_BYTES)
        service = ContainerService(store.containers(), files, tmp_path / "containers", SandboxLimits()).for_tenant("a")
        container = await service.create(CreateContainerRequest(name="short", expires_after={"minutes": 1}))  # type: ignore[arg-type]
        kept = await service.create(CreateContainerRequest(name="kept"))
        await service.add_upload(container.id, "data.txt", _bytes(b"hello"))
        directory = tmp_path / "containers" / container.id
        assert (directory / "data.txt").read_bytes() == b"hello"
        assert container.id not in await _idle(store)  # not idle yet
        await store.containers().scoped("a").touch_container(container.id, int(time.time()) - 61)
        assert container.id in await _idle(store)
        assert await service.expire_idle() >= 1
        assert (await service.get(container.id)).status == "expired"
        assert not directory.exists()
        assert (await service.list_files(container.id, limit=10, order="asc", after=None)) == ([], False)
        with pytest.raises(InvalidRequest, match=r"Container is expired\."):
            await service.add_upload(container.id, "more.txt", _bytes(b"x"))
        assert (await service.get(kept.id)).status == "running"
        with pytest.raises(Exception, match="No container found"):
            await service.for_tenant("b").get(kept.id)
    finally:
        await store.aclose()


async def test_a_replica_that_only_took_an_upload_removes_its_copy_once_the_container_is_gone(
    db_url: str, tmp_path: Path
) -> None:
    """Replica B (its own containers directory) takes an upload for a container made and later deleted
    through A; B never ran its code. B's next periodic pass removes its copy all the same (it kept it
    for good before: the pass looked only at containers whose code it ran)."""
    store = SqlStore(db_url)
    await store.migrate()
    try:
        a, b = _replicas(store, tmp_path)
        deleted = await a.create(CreateContainerRequest(name="deleted"))
        kept = await a.create(CreateContainerRequest(name="kept"))
        for container in (deleted, kept):
            await b.add_upload(container.id, "data.txt", _bytes(b"on b"))
        copies = {container.id: tmp_path / "b" / container.id / "data.txt" for container in (deleted, kept)}
        assert all(copy.read_bytes() == b"on b" for copy in copies.values())
        await a.delete(deleted.id)
        await b.expire_idle()
        assert not copies[deleted.id].parent.exists()
        assert copies[kept.id].read_bytes() == b"on b"  # a running container's copy stays
    finally:
        await store.aclose()


@pytest.mark.skipif(probe_sandbox() is not None, reason="no sandbox here")
async def test_a_python_claimed_elsewhere_or_a_container_gone_is_let_go(tmp_path: Path) -> None:
    """Two processes' services on one store and one directory (two workers): once the second runs a
    container's code, the first stops its Python for it at its next periodic pass; a container deleted
    through the second has its Python stopped in the first too."""
    store = SqlStore(f"sqlite:///{tmp_path / 'r.db'}")
    await store.migrate()
    try:
        files = FileService(store.files(), 1024 * 1024, PART_BYTES)
        one, two = (ContainerService(store.containers(), files, tmp_path / "containers", SandboxLimits()).for_tenant("a")
                    for _ in range(2))  # fmt: skip
        moved = await one.create(CreateContainerRequest(name="moved"))
        deleted = await one.create(CreateContainerRequest(name="deleted"))
        for container in (moved, deleted):
            await one.run(container, "x = 1")
        sandboxes = one._machine.sandboxes  # what this process runs: the guarantee is about its Pythons
        assert set(sandboxes) == {moved.id, deleted.id}
        assert (await two.run(moved, "print('here')")).execution.logs.endswith("here\n")
        await two.delete(deleted.id)
        await one.expire_idle()
        assert sandboxes == {}
        assert (await one.run(moved, "print('back')")).execution.logs.startswith("[Python restarted: ")
        await one.aclose()
        await two.aclose()
    finally:
        await store.aclose()


@pytest.mark.skipif(probe_sandbox() is not None, reason="no sandbox here")
async def test_files_brought_back_never_go_through_a_link_the_code_made(tmp_path: Path) -> None:
    """The code lists ``sub/x.txt``, then makes ``sub`` a link to a folder of the host; another process
    taking the container over brings ``sub/x.txt`` back from the store, and must not write through
    the link (the sandbox sees only the container's folder, the server sees the host)."""
    store = SqlStore(f"sqlite:///{tmp_path / 'r.db'}")
    await store.migrate()
    host = tmp_path / "host"
    host.mkdir()
    try:
        files = FileService(store.files(), 1024 * 1024, PART_BYTES)
        one, two = (ContainerService(store.containers(), files, tmp_path / "containers", SandboxLimits()).for_tenant("a")
                    for _ in range(2))  # fmt: skip
        container = await one.create(CreateContainerRequest(name="linked"))
        await one.run(
            container, "import os\nos.mkdir('/mnt/data/sub')\n_ = open('/mnt/data/sub/x.txt', 'w').write('x')"
        )
        directory = tmp_path / "containers" / container.id
        (directory / "sub" / "x.txt").unlink()
        (directory / "sub").rmdir()
        (directory / "sub").symlink_to(host)  # what hostile code would leave, were a link to the host its to make
        ran = await two.run(container, "print('ran')")
        assert ran.execution.logs.endswith("ran\n")
        assert list(host.iterdir()) == []
        assert [file.path for file in (await two.list_files(container.id, limit=10, order="asc", after=None))[0]] == []
        await one.aclose()
        await two.aclose()
    finally:
        await store.aclose()


@pytest.mark.skipif(probe_sandbox() is not None, reason="no sandbox here")
async def test_a_containers_skills_follow_it_to_a_replica_and_go_with_it(db_url: str, tmp_path: Path) -> None:
    """Replica A mounts a skill; replica B (another containers directory) runs a command in the container:
    the skill is at /mnt/skills there too, read from the store. Deleting the container removes them."""
    from pathlib import PurePosixPath

    store = SqlStore(db_url)
    await store.migrate()
    try:
        a, b = _replicas(store, tmp_path)
        skill = {"greeter": {PurePosixPath("SKILL.md"): b"---\nname: greeter\n---\n", PurePosixPath("bin/hi"): b"hi"}}
        container = await a.create(CreateContainerRequest(name="skilled"), skill)
        assert (tmp_path / "a" / ".skills" / container.id / "greeter" / "bin" / "hi").read_bytes() == b"hi"
        ran = await b.command(container, "cat /mnt/skills/greeter/bin/hi; ls /mnt/skills", 10, 1000)
        assert ran.ran.stdout == "higreeter\n" and ran.ran.exit_code == 0
        await b.delete(container.id)
        assert await store.containers().container_skills(container.id) == {}
        assert not (tmp_path / "b" / ".skills" / container.id).exists()
        await a.aclose()
        await b.aclose()
    finally:
        await store.aclose()
