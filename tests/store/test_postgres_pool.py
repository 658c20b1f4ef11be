"""A busy server keeps its PostgreSQL connections: it does not connect and disconnect per request."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import anyio
import asyncpg

from responsa.config import Settings
from responsa.store.sql._database import POOL_SIZE
from tests.conftest import POSTGRES_ADMIN_URL, fresh_postgres_database
from tests.in_process import in_process

CONCURRENT = 40
WAVES = 3


async def _sessions_once_closed(database: str) -> int:
    """The sessions PostgreSQL counted on ``database`` (a backend's count reaches the statistics by its
    exit at the latest), once every backend on it has exited."""
    admin = await asyncpg.connect(POSTGRES_ADMIN_URL)
    try:
        while await admin.fetchval("SELECT count(*) FROM pg_stat_activity WHERE datname = $1", database):
            await anyio.sleep(0.05)
        await admin.execute("SELECT pg_stat_clear_snapshot()")
        return int(await admin.fetchval("SELECT sessions FROM pg_stat_database WHERE datname = $1", database))
    finally:
        await admin.close()


def test_concurrent_requests_share_the_pools_connections() -> None:
    """Waves of 40 concurrent stored responses on one process: every connection it ever opened to the
    database fits in its pool (SQLAlchemy's default opened 10 more when busy and closed each one handed
    back: 36 sessions for these waves when tried). The migrations' own connection is the one more allowed."""
    with fresh_postgres_database() as url:
        database = url.rsplit("/", 1)[1]
        with in_process(Settings(db_url=url, embedded=False)) as app, ThreadPoolExecutor(CONCURRENT) as pool:
            for _ in range(WAVES):
                made = list(pool.map(lambda n: app.sdk.responses.create(model="sim", input=f"hello {n}"),
                                     range(CONCURRENT)))  # fmt: skip
                assert {response.status for response in made} == {"completed"}
            assert len(app.sdk.responses.input_items.list(made[-1].id).data) == 1
        sessions = anyio.run(_sessions_once_closed, database)
    assert 1 <= sessions <= POOL_SIZE + 1, f"{sessions} sessions for {WAVES * CONCURRENT} responses"
