"""SQLite writes asked for at the same moment share one commit, and one failing leaves the others be.

The HTTP API cannot make a write fail on purpose, so these drive the store directly (its public
class, the one the server uses).
"""

from __future__ import annotations

import asyncio
import sqlite3
import time
from pathlib import Path

import anyio
import pytest

from responsa.protocol import Conversation, InvalidRequest, Message
from responsa.store import SqlStore


def _conversation(conversation_id: str) -> Conversation:
    return Conversation(id=conversation_id, created_at=int(time.time()), metadata={})


def _message(text: str) -> Message:
    return Message.model_validate({"type": "message", "role": "user", "content": text})


def test_concurrent_writes_succeed_or_fail_one_by_one(db_path: Path) -> None:
    outcomes: dict[str, BaseException | None] = {}

    async def attempt(name: str, write: object) -> None:
        try:
            await write  # type: ignore[misc]
            outcomes[name] = None
        except BaseException as error:
            outcomes[name] = error

    async def main() -> None:
        store = SqlStore(f"sqlite:///{db_path}")
        await store.migrate()
        await store.conversations().create_conversation(_conversation("conv_existing"), [])
        async with anyio.create_task_group() as group:
            group.start_soon(
                attempt, "first", store.conversations().create_conversation(_conversation("conv_a"), [_message("a")])
            )
            group.start_soon(
                attempt, "duplicate", store.conversations().create_conversation(_conversation("conv_existing"), [])
            )
            group.start_soon(
                attempt,
                "bad metadata",
                store.conversations().update_conversation_metadata("conv_existing", {"k" * 100: "v"}),
            )
            group.start_soon(
                attempt, "append", store.conversations().append_conversation_items("conv_existing", [_message("b")])
            )
            group.start_soon(
                attempt, "last", store.conversations().create_conversation(_conversation("conv_b"), [_message("c")])
            )
        assert outcomes["first"] is None and outcomes["append"] is None and outcomes["last"] is None
        assert outcomes["duplicate"] is not None
        assert isinstance(outcomes["bad metadata"], InvalidRequest)
        for conversation_id, texts in (("conv_a", ["a"]), ("conv_existing", ["b"]), ("conv_b", ["c"])):
            items = await store.conversations().load_conversation(conversation_id)
            assert items is not None
            assert [item.content for item in items] == texts  # type: ignore[union-attr]
        existing = await store.conversations().get_conversation("conv_existing")
        assert existing is not None and existing.metadata == {}
        await store.aclose()

    anyio.run(main)


def test_a_lone_failing_write_changes_nothing(db_path: Path) -> None:
    async def main() -> None:
        store = SqlStore(f"sqlite:///{db_path}")
        await store.migrate()
        await store.conversations().create_conversation(_conversation("conv_one"), [_message("kept")])
        with pytest.raises(InvalidRequest):
            await store.conversations().update_conversation_metadata("conv_one", {"k" * 100: "v"})
        conversation = await store.conversations().get_conversation("conv_one")
        assert conversation is not None and conversation.metadata == {}
        items = await store.conversations().load_conversation("conv_one")
        assert items is not None and len(items) == 1
        await store.aclose()

    anyio.run(main)


def test_the_wal_stays_bounded_under_steady_writes(db_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Writers that never pause leave a passive checkpoint no moment to start the WAL over; the
    checkpointer then empties it once it passes its limit (scaled down here: 64 pages, 20 ms)."""
    from responsa.store.sql import _sqlite_database

    monkeypatch.setattr(_sqlite_database, "CHECKPOINT_EVERY", 0.02)
    monkeypatch.setattr(_sqlite_database, "TRUNCATE_AFTER_FRAMES", 64)
    wal = Path(f"{db_path}-wal")
    largest = appended = 0
    enough = 100 * 2**20  # far more than the WAL may hold: written however long this machine takes

    async def writer(store: SqlStore, conversation_id: str, deadline: float) -> None:
        nonlocal largest, appended
        while appended * 2000 <= enough and time.monotonic() < deadline:
            await store.conversations().append_conversation_items(
                conversation_id, [_message("x" * 2000) for _ in range(10)]
            )
            appended += 10
            largest = max(largest, wal.stat().st_size if wal.exists() else 0)

    async def main() -> None:
        store = SqlStore(f"sqlite:///{db_path}")
        await store.migrate()
        deadline = time.monotonic() + 120
        async with anyio.create_task_group() as group:
            for index in range(8):
                await store.conversations().create_conversation(_conversation(f"conv_{index}"), [])
                group.start_soon(writer, store, f"conv_{index}", deadline)
        written = 0
        for index in range(8):
            written += len(await store.conversations().load_conversation(f"conv_{index}") or [])
        await store.aclose()
        assert written == appended and written * 2000 > enough, (written, appended)
        assert largest < 48 * 2**20, f"the WAL grew to {largest} bytes"  # unbounded: hundreds of MB in 3 s

    anyio.run(main)


def test_a_cancelled_writer_still_writes_and_hears_of_it_after(db_path: Path) -> None:
    """A writer cancelled while its batch gathers: its write and its batch-mate's are committed, and
    the cancel reaches it only once its write is over (as a shielded write would)."""
    seen: dict[str, list[str]] = {}

    async def cancelled_writer(store: SqlStore) -> None:
        with anyio.CancelScope() as scope:
            scope.cancel()
            try:
                await store.conversations().append_conversation_items("conv_c", [_message("kept")])
            finally:
                with anyio.CancelScope(shield=True):
                    items = await store.conversations().load_conversation("conv_c") or []
                    seen["at the cancel"] = [item.content for item in items]  # type: ignore[union-attr]

    async def main() -> None:
        store = SqlStore(f"sqlite:///{db_path}")
        await store.migrate()
        await store.conversations().create_conversation(_conversation("conv_c"), [])
        await store.conversations().create_conversation(_conversation("conv_d"), [])
        async with anyio.create_task_group() as group:
            group.start_soon(cancelled_writer, store)
            group.start_soon(store.conversations().append_conversation_items, "conv_d", [_message("mate")])
        mate = await store.conversations().load_conversation("conv_d") or []
        assert [item.content for item in mate] == ["mate"]  # type: ignore[union-attr]
        assert seen["at the cancel"] == ["kept"]
        await store.aclose()

    anyio.run(main)


async def _with_the_lock_held_elsewhere(db_path: Path) -> tuple[SqlStore, sqlite3.Connection]:
    """A migrated store on ``db_path`` and another connection holding the file's write lock (as
    another worker of ``--workers`` would)."""
    store = SqlStore(f"sqlite:///{db_path}")
    await store.migrate()
    other = sqlite3.connect(db_path, isolation_level=None)
    other.execute("BEGIN IMMEDIATE")
    return store, other


def test_a_write_waits_for_another_process_lock_without_stopping_the_loop(db_path: Path) -> None:
    """With the file's write lock held elsewhere (another worker of ``--workers``: here another
    connection), a write waits for it while the event loop goes on serving; it commits once the lock
    is let go. (SQLite's own busy handler would sleep with the loop stopped.)"""

    async def main() -> None:
        store, other = await _with_the_lock_held_elsewhere(db_path)
        written = anyio.Event()

        async def write() -> None:
            await store.conversations().create_conversation(_conversation("conv_waited"), [_message("a")])
            written.set()

        turns = 0
        async with anyio.create_task_group() as group:
            group.start_soon(write)
            while turns < 200:  # 200 turns of the loop, each a real wait of a millisecond at least
                await anyio.sleep(0.001)
                turns += 1
            assert not written.is_set()
            other.execute("COMMIT")
            await written.wait()
        assert [row[0] for row in other.execute("SELECT id FROM conversations")] == ["conv_waited"]
        other.close()
        await store.aclose()

    anyio.run(main)


def test_a_cancelled_writer_waiting_for_another_process_lock_does_not_spin(db_path: Path) -> None:
    """A writer cancelled while its batch waits for a lock another process holds waits quietly: the
    loop turns once per lock retry (``LOCK_RETRY_SECS``), not once per cancel its scope delivers
    again (a loop that turned tens of thousands of times a second while the lock was held)."""
    import selectors

    from responsa.store.sql._sqlite_database import LOCK_RETRY_SECS

    class CountingSelector(selectors.DefaultSelector):  # type: ignore[misc,valid-type]
        selects = 0

        def select(self, timeout: float | None = None) -> list[tuple[selectors.SelectorKey, int]]:
            CountingSelector.selects += 1
            return super().select(timeout)

    async def main() -> None:
        store, other = await _with_the_lock_held_elsewhere(db_path)
        ended = anyio.Event()

        async def cancelled_writer() -> None:
            with anyio.CancelScope() as scope:
                scope.cancel()
                try:
                    await store.conversations().create_conversation(_conversation("conv_cancelled"), [])
                finally:
                    ended.set()

        async with anyio.create_task_group() as group:
            before, start = CountingSelector.selects, time.monotonic()
            group.start_soon(cancelled_writer)
            await anyio.sleep(0.5)
            turns, held = CountingSelector.selects - before, time.monotonic() - start
            assert not ended.is_set()
            other.execute("COMMIT")
            await ended.wait()
        assert turns < 3 * held / LOCK_RETRY_SECS, f"{turns} turns of the loop in {held:.2f} s"
        # the write was done all the same (a cancel never half-does one)
        assert [row[0] for row in other.execute("SELECT id FROM conversations")] == ["conv_cancelled"]
        other.close()
        await store.aclose()

    anyio.run(main, backend_options={"loop_factory": lambda: asyncio.SelectorEventLoop(CountingSelector())})
