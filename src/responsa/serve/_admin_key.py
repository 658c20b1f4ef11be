"""``responsa admin-key``: an admin key made in the store (migrated first, as ``serve`` would), its
secret printed once, for an operator who has no admin key yet to call the Admin API with."""

from __future__ import annotations

import anyio

from responsa.engine.projects import KeyDirectory, ProjectService
from responsa.protocol import AdminKeyCreated, CreateAdminKeyRequest
from responsa.store import SqlStore

__all__ = ["make_admin_key"]


def make_admin_key(db_url: str, name: str, expires_in_seconds: int | None = None) -> AdminKeyCreated:
    """A new admin key in the store at ``db_url``; every server on that store honours it (within its
    ``--keys-poll-secs``)."""

    async def made() -> AdminKeyCreated:
        store = SqlStore(db_url)
        try:
            await store.migrate()
            service = ProjectService(store.projects(), KeyDirectory())
            return await service.create_admin_key(
                CreateAdminKeyRequest(name=name, expires_in_seconds=expires_in_seconds)
            )
        finally:
            await store.aclose()

    return anyio.run(made)
