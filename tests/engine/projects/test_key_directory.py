"""The key directory: a key honoured until it expires, an archived project's keys not at all, and
the store's changes read only when its count of changes moved."""

from __future__ import annotations

import time
from pathlib import Path

import anyio

from responsa.engine.projects import KeyDirectory
from responsa.engine.projects._secrets import secret_hash
from responsa.store import KeyRow, ProjectRow, SqlStore


def test_expired_and_archived_keys_are_not_honoured(tmp_path: Path) -> None:
    async def run() -> None:
        store = SqlStore(f"sqlite:///{tmp_path / 'keys.db'}")
        await store.migrate()
        projects, now = store.projects(), int(time.time())
        await projects.create_project(ProjectRow("proj_a", "a", now))
        await projects.create_project(ProjectRow("proj_gone", "gone", now, archived_at=now))
        for key_id, secret, project, expires in (("key_live", "live", "proj_a", now + 3600),
                                                 ("key_old", "old", "proj_a", now - 1),
                                                 ("key_archived", "archived", "proj_gone", None)):  # fmt: skip
            await projects.create_key(KeyRow(key_id, secret_hash(secret), key_id, "****", now, project, None, expires))
        directory = KeyDirectory()
        assert not directory.required
        await directory.attach(projects)
        live = directory.resolve(b"live")
        assert live is not None and (live.tenant, live.key_id) == ("proj_a", "key_live")
        assert directory.resolve(b"old") is None
        assert directory.resolve(b"archived") is None
        assert directory.required and not directory.has_admin

        await directory.flush_uses()  # the live key's use, written back
        row = await projects.get_key("proj_a", "key_live")
        assert row is not None and row.last_used_at is not None and now <= row.last_used_at <= time.time()
        await store.aclose()

    anyio.run(run)
