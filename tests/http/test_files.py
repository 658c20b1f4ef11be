"""``/v1/files`` through the openai SDK, on SQLite and PostgreSQL: uploads stored in the store part by
part and read back byte for byte, listing, deletion that removes the bytes, the size limit (413, with
or without a content-length, nothing left behind), validation, expiry, and tenants kept apart."""

from __future__ import annotations

import os
import sqlite3
import time
from collections.abc import Iterator

import anyio
import httpx
import openai
import pytest

from responsa.config import ApiKey
from tests.conftest import LiveServer, sqlite_server


def _sdk(server: LiveServer, key: str = "unused") -> openai.OpenAI:
    return openai.OpenAI(base_url=server.v1, api_key=key, max_retries=0)


def _run_sql(db_url: str, statement: str, *args: object) -> list[tuple[object, ...]]:
    """A statement on the server's own database (``?`` placeholders, turned into ``$n`` for PostgreSQL)."""
    if db_url.startswith("sqlite:///"):
        with sqlite3.connect(db_url.removeprefix("sqlite:///")) as conn:
            return list(conn.execute(statement, args).fetchall())
    import asyncpg

    for n in range(1, len(args) + 1):
        statement = statement.replace("?", f"${n}", 1)

    async def run() -> list[tuple[object, ...]]:
        conn = await asyncpg.connect(db_url)
        try:
            return [tuple(row) for row in await conn.fetch(statement, *args)]
        finally:
            await conn.close()

    return anyio.run(run)


def test_upload_read_list_and_delete(server: LiveServer) -> None:
    data = os.urandom(600 * 1024) + b"the end"  # three parts in the store
    with _sdk(server) as client:
        created = client.files.create(file=("report.bin", data, "application/octet-stream"), purpose="assistants")
        assert created.object == "file" and created.id.startswith("file-")
        assert created.bytes == len(data) and created.filename == "report.bin" and created.purpose == "assistants"
        assert created.status == "processed" and created.expires_at is None
        assert abs(created.created_at - time.time()) < 60

        assert client.files.retrieve(created.id) == created
        assert client.files.content(created.id).content == data
        parts = _run_sql(server.settings.db_url, "SELECT count(*) FROM file_parts WHERE file_id = ?", created.id)
        assert parts == [(3,)]

        small = client.files.create(file=("notes.md", b"# Notes\n", "text/markdown"), purpose="user_data")
        listed = [f.id for f in client.files.list()]
        assert listed.index(small.id) < listed.index(created.id)  # newest first
        assert [f.id for f in client.files.list(purpose="user_data") if f.id in (small.id, created.id)] == [small.id]
        assert [f.id for f in client.files.list(order="asc", limit=1000)][-2:] == [created.id, small.id]

        deleted = client.files.delete(created.id)
        assert deleted.id == created.id and deleted.deleted and deleted.object == "file"
        with pytest.raises(openai.NotFoundError):
            client.files.retrieve(created.id)
        with pytest.raises(openai.NotFoundError):
            client.files.content(created.id)
        with pytest.raises(openai.NotFoundError):
            client.files.delete(created.id)
        assert created.id not in [f.id for f in client.files.list()]
        assert _run_sql(server.settings.db_url, "SELECT count(*) FROM file_parts WHERE file_id = ?", created.id) == [
            (0,)
        ]
        empty = client.files.create(file=("empty.txt", b"", "text/plain"), purpose="assistants")
        assert empty.bytes == 0 and client.files.content(empty.id).content == b""


def test_bad_uploads_are_400s(http: httpx.Client) -> None:
    cases = [
        ({"purpose": "assistants"}, None, "file"),
        ({}, {"file": ("a.txt", b"x")}, "purpose"),
        ({"purpose": "homework"}, {"file": ("a.txt", b"x")}, "purpose"),
        (
            {"purpose": "assistants", "expires_after[anchor]": "created_at", "expires_after[seconds]": "60"},
            {"file": ("a.txt", b"x")},
            "expires_after[seconds]",
        ),
        (
            {"purpose": "assistants", "expires_after[anchor]": "last_active_at", "expires_after[seconds]": "3600"},
            {"file": ("a.txt", b"x")},
            "expires_after[anchor]",
        ),
    ]
    for form, files, param in cases:
        reply = http.post("/v1/files", data=form, files=files or {"unused": ("", b"")})
        assert reply.status_code == 400, reply.text
        assert reply.json()["error"]["param"] == param and reply.json()["error"]["type"] == "invalid_request_error"
    assert http.get("/v1/files", params={"limit": 0}).status_code == 400


def test_expiry(server: LiveServer) -> None:
    with _sdk(server) as client:
        file = client.files.create(
            file=("t.txt", b"short-lived", "text/plain"),
            purpose="assistants",
            expires_after={"anchor": "created_at", "seconds": 3600},
        )
        assert file.expires_at == file.created_at + 3600
        _run_sql(server.settings.db_url, "UPDATE files SET expires_at = ? WHERE id = ?", int(time.time()) - 1, file.id)
        with pytest.raises(openai.NotFoundError):  # expired: gone at once, bytes swept later
            client.files.retrieve(file.id)
        assert file.id not in [f.id for f in client.files.list()]


@pytest.fixture(scope="module")
def small_limit(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveServer]:
    keys = (ApiKey("sk-alice", "alice"), ApiKey("sk-bob", "bob"))
    yield from sqlite_server(tmp_path_factory, "files", api_keys=keys, embedded=False, max_file_bytes=300_000)


def test_too_large_is_413_and_leaves_nothing(small_limit: LiveServer) -> None:
    with _sdk(small_limit, "sk-alice") as client:
        with pytest.raises(openai.APIStatusError) as refused:
            client.files.create(file=("big.bin", b"x" * 400_000, "application/octet-stream"), purpose="assistants")
        assert refused.value.status_code == 413
        assert refused.value.body["code"] == "request_too_large"  # type: ignore[index]

        # Without a content-length (chunked), refused while it arrives; the parts written so far go.
        def body() -> Iterator[bytes]:
            yield b'--b\r\nContent-Disposition: form-data; name="purpose"\r\n\r\nassistants\r\n'
            yield b'--b\r\nContent-Disposition: form-data; name="file"; filename="big.bin"\r\n\r\n'
            for _ in range(50):
                yield b"y" * 10_000
            yield b"\r\n--b--\r\n"

        headers = {"authorization": "Bearer sk-alice", "content-type": "multipart/form-data; boundary=b"}
        reply = httpx.post(f"{small_limit.v1}/files", content=body(), headers=headers)
        assert reply.status_code == 413 and reply.json()["error"]["type"] == "invalid_request_error"
        assert client.files.list().data == []
        assert _run_sql(small_limit.settings.db_url, "SELECT count(*) FROM file_parts") == [(0,)]
        # Just under the limit is fine.
        assert client.files.create(file=("ok.bin", b"z" * 299_000, "text/plain"), purpose="assistants").bytes == 299_000


def test_tenants_see_only_their_own_files(small_limit: LiveServer) -> None:
    with _sdk(small_limit, "sk-alice") as alice, _sdk(small_limit, "sk-bob") as bob:
        mine = alice.files.create(file=("secret.txt", b"alice only", "text/plain"), purpose="user_data")
        assert mine.id not in [f.id for f in bob.files.list()]
        for attempt in (bob.files.retrieve, bob.files.content, bob.files.delete):
            with pytest.raises(openai.NotFoundError):
                attempt(mine.id)
        assert alice.files.content(mine.id).content == b"alice only"
