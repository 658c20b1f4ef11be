"""The SQL store (SQLAlchemy Core): SQLite by default, PostgreSQL for replicas; the same queries for both."""

from __future__ import annotations

import copy
import time
from collections.abc import Sequence
from typing import Any

import orjson
from sqlalchemy import delete, select, union_all

from responsa.protocol import TERMINAL_STATUSES, Item, ResponseObject, dump_dict

from .._base import ItemPage, LoggedEvent, Order, ResponseFilter, ResponsePage, Retention, StoreHealth
from . import _statements as sql
from ._batches import SqlBatches
from ._chunks import SqlChunks
from ._containers import SqlContainers
from ._context_cache import ContextCache, ConversationSnapshot
from ._conversations import SqlConversations, append_items, conversation_rows, live
from ._database import Sql, open_database
from ._faults import GuardedDatabase
from ._files import SqlFiles
from ._migrate import SchemaTooNew, newer_than_known, schema_version, upgrade_in_child, upgrade_to_head
from ._paging import dump_item, item_page, load_item
from ._projects import SqlProjects
from ._response_listing import list_rows
from ._skills import SqlSkills
from ._tables import SCHEMA_VERSION, conversation_items, conversations, response_events, response_items, responses
from ._usage import SqlUsage
from ._vector_stores import SqlVectorStores
from ._webhooks import SqlWebhooks, announce

__all__ = ["SqlStore"]

_ANNOUNCED = frozenset({"completed", "failed", "cancelled", "incomplete"})
"""A background response's final states, each a webhook event (``response.<status>``)."""


class SqlStore:
    """Responses as rows; items in their own tables so chains and listings never parse whole bodies.
    The other repositories are composed on the same database, each a view of this store's tenant:
    :meth:`conversations`, :meth:`files`, :meth:`vector_stores`, :meth:`containers`."""

    def __init__(self, url: str, retention: Retention | None = None) -> None:
        self.retention = retention or Retention()
        self.tenant = "default"
        self._url = url
        self._db: GuardedDatabase = GuardedDatabase(open_database(url))
        self._contexts: ContextCache[tuple[int, tuple[Item, ...]]] = ContextCache()
        """Chains read before, each with the count of responses removed when it was read (see load_context)."""
        self._conversation_contexts: ContextCache[ConversationSnapshot] = ContextCache(size=128)
        self._views: dict[str, SqlStore] = {}
        self._chunks = SqlChunks(self._db, url)

    def scoped(self, tenant: str) -> SqlStore:
        """The store as ``tenant`` sees it, made once per tenant (the configured keys' tenants)."""
        view = self._views.get(tenant)
        if view is None:
            view = self._views[tenant] = copy.copy(self)  # shares the database, the context cache, the views
            view.tenant = tenant
        return view

    async def check_health(self) -> StoreHealth:
        """Whether the store can serve now (see ``GuardedDatabase.check``)."""
        return await self._db.check()

    def conversations(self) -> SqlConversations:
        """The conversations of this view's tenant (a response's save still appends its turn in its own
        transaction, ``append_to_conversation``)."""
        return SqlConversations(self._db, self.tenant, self.retention, self._conversation_contexts)

    def vector_stores(self) -> SqlVectorStores:
        """The vector stores of this view's tenant, their files, batches, chunks and vectors."""
        return SqlVectorStores(self._db, self.tenant, self._chunks)

    def files(self) -> SqlFiles:
        """The files of this view's tenant; deleting one removes it from the vector stores that hold it too."""
        return SqlFiles(self._db, self.tenant, self.vector_stores().delete_file_everywhere)

    def containers(self) -> SqlContainers:
        """The containers of this view's tenant (their own repository, on the same database)."""
        return SqlContainers(self._db, self.tenant)

    def batches(self) -> SqlBatches:
        """The batches of this view's tenant and their lines (finishing one writes its files and events)."""
        return SqlBatches(self._db, self.tenant)

    def webhooks(self) -> SqlWebhooks:
        """The webhook endpoints of this view's tenant and the outbox of deliveries."""
        return SqlWebhooks(self._db, self.tenant)

    def projects(self) -> SqlProjects:
        """The organization's projects, service accounts and API keys (every tenant's: an admin's view)."""
        return SqlProjects(self._db)

    def usage(self) -> SqlUsage:
        """The usage ledger (every tenant's: an admin's view)."""
        return SqlUsage(self._db)

    def skills(self) -> SqlSkills:
        """The skills of this view's tenant and their versions."""
        return SqlSkills(self._db, self.tenant)

    def _live_response(self, response_id: str) -> dict[str, Any]:
        return {"response_id": response_id, **live(self.tenant, self.retention.response_ttl)}

    async def migrate(self) -> None:
        """Upgrade the schema if it is behind, in a child process (see ``_migrate``): the server never
        loads Alembic, except for an in-memory database. Processes starting together migrate one at a
        time (see the databases' ``migrate``); a schema newer than this code's is refused."""
        found = await self._db.read(schema_version)
        if found == SCHEMA_VERSION:
            return
        if newer_than_known(found):
            raise SchemaTooNew(
                f"the store's schema is at revision {found}, which this version of responsa does not know "
                f"(its newest is {SCHEMA_VERSION}): a newer responsa migrated it; run that version, or "
                "another database"
            )
        if self._db.private:  # no other process can open it
            await self._db.migrate(upgrade_to_head)
        else:
            await upgrade_in_child(self._url)

    async def save_response(
        self,
        response: ResponseObject,
        input_items: Sequence[Item] | None = None,
        append_to_conversation: Sequence[Item] = (),
        events: Sequence[LoggedEvent] = (),
        lease_until: float | None = None,
        timing: str | None = None,
    ) -> dict[str, Any]:
        # Everything the write needs is copied now, from one dump: the write may wait for its batch (or
        # a pooled connection) while the run goes on changing ``response``, and the row's status column
        # and its body must say the same thing (the column is read from the body's own copy).
        saved = dump_dict(response)
        fields = saved.copy()  # the row's body: the response without its output (in response_items)
        del fields["output"], fields["output_text"]
        if response.shown_includes:
            fields[_SHOWN] = list(response.shown_includes)
        body = orjson.dumps(fields).decode()
        status: str = fields["status"]
        response_id, background = response.id, bool(response.background)
        output_bodies = [orjson.dumps(item).decode() for item in saved["output"]]
        outputs = _item_rows(response_id, "output", list(response.output), output_bodies)
        conversation_id = response.conversation["id"] if response.conversation else None
        new_row, first_rows = None, outputs
        if input_items is not None:  # the first save: the row is new (fewer statements on the hot path)
            new_row = {
                "id": response_id,
                "created_at": response.created_at,
                "status": status,
                "previous_response_id": response.previous_response_id,
                "body": body,
                "stored_at": time.time(),
                "conversation_id": conversation_id,
                "background": background,
                "tenant": self.tenant,
                "lease_until": lease_until,
                "timing": timing,
            }
            first_rows = _item_rows(response_id, "input", input_items, [dump_item(i) for i in input_items]) + outputs
        turn = conversation_rows(append_to_conversation) if conversation_id is not None else []
        named = self.conversations() if turn and self.retention.conversations_on_first_use else None
        logged = _event_rows(response_id, events)
        announced = f"response.{status}" if background and status in _ANNOUNCED else None

        def work(conn: Sql) -> None:
            if new_row is not None:
                conn.execute(sql.INSERT_RESPONSE, [new_row])
                self._evict_responses_over_cap(conn)
                rows = first_rows
            else:
                update = {"response_id": response_id, "owner": self.tenant, "new_status": status}
                conn.execute(sql.UPDATE_RESPONSE, {**update, "new_body": body, "new_timing": timing})
                conn.execute(sql.DELETE_OUTPUTS, {"response_id": response_id})
                rows = outputs
            if rows:
                conn.execute(sql.INSERT_ITEMS, rows)
            if turn and conversation_id is not None and (named is None or named.begin_in(conn, conversation_id)):
                append_items(conn, conversation_id, turn)
            if logged:
                conn.execute(sql.APPEND_EVENTS, logged)
            if announced is not None:  # its webhook, with the state it announces
                announce(conn, self.tenant, announced, response_id, int(time.time()))

        await self._db.write(work)
        return saved

    async def get_response(self, response_id: str) -> ResponseObject | None:
        def work(conn: Sql) -> tuple[str, list[str]] | None:
            body = conn.execute(sql.RESPONSE_BODY, self._live_response(response_id)).scalar()
            if body is None:
                return None
            return body, list(conn.execute(sql.OUTPUTS, {"response_id": response_id}).scalars())

        found = await self._db.read(work)
        return None if found is None else _response_of(*found)

    async def get_timing(self, response_id: str) -> list[dict[str, Any]] | None:
        timing = await self._db.read(lambda conn: conn.execute(sql.TIMING, self._live_response(response_id)).scalar())
        return None if timing is None else list(orjson.loads(timing))

    async def append_events(self, response_id: str, events: Sequence[LoggedEvent]) -> None:
        if not events:
            return
        rows = _event_rows(response_id, events)
        await self._db.write(lambda conn: conn.execute(sql.APPEND_EVENTS, rows))

    async def events_after(self, response_id: str, after: int, limit: int = 1000) -> list[LoggedEvent]:
        where = {"response_id": response_id, "after": after, "tenant": self.tenant, "limit": limit}
        return await self._db.read(lambda conn: [LoggedEvent(*row) for row in conn.execute(sql.EVENTS_AFTER, where)])

    async def renew_leases(self, response_ids: Sequence[str], until: float) -> None:
        if not response_ids:
            return
        where = {"ids": list(response_ids), "until": until}
        await self._db.write(lambda conn: conn.execute(sql.RENEW_LEASES, where))

    async def claim_orphan(self, response_id: str, now: float, until: float) -> bool:
        claim = {"response_id": response_id, "now": now, "until": until}
        return await self._db.write(lambda conn: conn.execute(sql.CLAIM_ORPHAN, claim).rowcount == 1)

    async def request_cancel(self, response_id: str) -> None:
        await self._db.write(lambda conn: conn.execute(sql.ASK_CANCEL, {"response_id": response_id}))

    async def cancel_asks(self) -> int:
        return await self._db.read(lambda conn: conn.execute(sql.CANCEL_ASKS).scalar() or 0)

    async def cancels_requested(self, response_ids: Sequence[str]) -> list[str]:
        if not response_ids:
            return []
        ids = {"ids": list(response_ids)}
        return await self._db.read(lambda conn: list(conn.execute(sql.CANCELS_ASKED, ids).scalars()))

    async def orphaned(self, now: float) -> list[tuple[str, ResponseObject]]:
        column = responses.c
        query = select(column.id, column.tenant).where(
            column.background.in_((True, False)),  # so that the (background, status) index serves
            column.status.in_(("queued", "in_progress")),
            (column.lease_until.is_(None)) | (column.lease_until < now),
        )
        found = await self._db.read(lambda conn: [(response_id, tenant) for response_id, tenant in conn.execute(query)])
        orphans = []
        for response_id, tenant in found:
            response = await self.scoped(tenant).get_response(response_id)
            if response is not None:
                orphans.append((tenant, response))
        return orphans

    async def list_responses(
        self, wanted: ResponseFilter, *, limit: int, order: Order, after: str | None, before: str | None
    ) -> ResponsePage:
        unexpired = live(self.tenant, self.retention.response_ttl)
        sqlite = self._url.startswith("sqlite")

        def work(conn: Sql) -> tuple[list[tuple[str, str, list[str]]], bool]:
            return list_rows(conn, sqlite, unexpired, wanted, limit=limit, order=order, after=after, before=before)

        rows, has_more = await self._db.read(work)
        return ResponsePage([_response_of(body, outputs) for _response_id, body, outputs in rows], has_more)

    async def delete_response(self, response_id: str) -> bool:
        def work(conn: Sql) -> bool:
            if not self._response_exists(conn, response_id):
                return False
            return self._delete_responses(conn, [response_id]) > 0

        return await self._db.write(work)

    def _response_exists(self, conn: Sql, response_id: str) -> bool:
        return conn.execute(sql.RESPONSE_EXISTS, self._live_response(response_id)).first() is not None

    async def list_input_items(
        self, response_id: str, *, limit: int, order: Order, after: str | None, before: str | None
    ) -> ItemPage | None:
        scope = [response_items.c.response_id == response_id, response_items.c.role == "input"]

        def work(conn: Sql) -> ItemPage | None:
            if not self._response_exists(conn, response_id):
                return None
            return item_page(conn, response_items, scope, limit=limit, order=order, after=after, before=before)

        return await self._db.read(work)

    async def load_context(self, response_id: str) -> list[Item] | None:
        """From the cache where the chain was loaded before: then only this response's items are read.
        A cached chain is used only while no response has been removed since it was read, by any process
        (the database counts removals, migration 0012; one primary-key read): a chain through a response
        deleted elsewhere is read again, without it."""
        cached = self._contexts.get(self.tenant, response_id)

        def work(conn: Sql) -> tuple[int, tuple[Item, ...], list[str], bool] | None:
            link = conn.execute(sql.RESPONSE_LINK, self._live_response(response_id)).first()
            if link is None:
                return None
            status, previous = link
            finished = status in TERMINAL_STATUSES
            removed = conn.execute(sql.RESPONSES_REMOVED).scalar() or 0
            if cached is not None and finished and cached[0] == removed:
                return removed, cached[1], [], True
            before = self._contexts.get(self.tenant, previous) if previous else (removed, ())
            if before is not None and before[0] == removed:
                own = list(conn.execute(sql.OWN_ITEMS, {"response_id": response_id}).scalars())
                return removed, before[1], own, finished
            return removed, (), list(conn.execute(sql.CONTEXT, {"response_id": response_id}).scalars()), finished

        found = await self._db.read(work)
        if found is None:
            return None
        removed, before, bodies, finished = found
        context = (*before, *(load_item(body) for body in bodies))
        if finished:
            self._contexts.put(self.tenant, response_id, (removed, context))
        return list(context)

    async def get_item(self, item_id: str) -> Item | None:
        in_responses = (
            select(response_items.c.body)
            .join(responses, responses.c.id == response_items.c.response_id)
            .where(response_items.c.item_id == item_id, responses.c.tenant == self.tenant)
        )
        in_conversations = (
            select(conversation_items.c.body)
            .join(conversations, conversations.c.id == conversation_items.c.conversation_id)
            .where(conversation_items.c.item_id == item_id, conversations.c.tenant == self.tenant)
        )
        query = union_all(in_responses, in_conversations).limit(1)
        body = await self._db.read(lambda conn: conn.execute(query).scalar())
        return None if body is None else load_item(body)

    def _evict_responses_over_cap(self, conn: Sql) -> int:
        cap = self.retention.response_max_entries
        if not cap:
            return 0
        evicted = select(responses.c.id).order_by(responses.c.stored_at.desc()).offset(cap)
        return self._delete_responses(conn, list(conn.execute(evicted).scalars()))

    async def sweep(self) -> int:
        def work(conn: Sql) -> int:
            removed = 0
            if self.retention.response_ttl:
                expired = select(responses.c.id).where(
                    responses.c.stored_at < time.time() - self.retention.response_ttl
                )
                removed += self._delete_responses(conn, list(conn.execute(expired).scalars()))
            return (
                removed
                + self.conversations().sweep(conn)
                + self.files().sweep(conn)
                + self.vector_stores().sweep(conn)
                + self.webhooks().sweep(conn)
            )

        return await self._db.write(work)

    async def aclose(self) -> None:
        await self._db.aclose()

    def _delete_responses(self, conn: Sql, ids: list[str]) -> int:
        """Delete with items and events; cached contexts may run through them, so they all go."""
        if not ids:
            return 0
        self._contexts.clear()
        conn.execute(delete(response_items).where(response_items.c.response_id.in_(ids)))
        conn.execute(delete(response_events).where(response_events.c.response_id.in_(ids)))
        deleted = conn.execute(delete(responses).where(responses.c.id.in_(ids)))
        return int(deleted.rowcount)


def _item_rows(response_id: str, role: str, items: Sequence[Item], bodies: Sequence[str]) -> list[dict[str, Any]]:
    return [
        {"response_id": response_id, "role": role, "position": i, "item_id": item.id, "body": body}
        for i, (item, body) in enumerate(zip(items, bodies, strict=True))
    ]


_SHOWN = "_shown_includes"
"""The body's key for :attr:`ResponseObject.shown_includes` (no wire field starts with ``_``)."""


def _response_of(body: str, outputs: list[str]) -> ResponseObject:
    """A stored response from its row's body (the response without ``output``) and its output items."""
    data: dict[str, Any] = orjson.loads(body)
    data["output"] = [orjson.loads(item) for item in outputs]
    data["shown_includes"] = data.pop(_SHOWN, ())
    return ResponseObject.model_validate(data)


def _event_rows(response_id: str, events: Sequence[LoggedEvent]) -> list[dict[str, Any]]:
    return [
        {"response_id": response_id, "sequence_number": e.sequence_number, "type": e.type, "body": e.data}
        for e in events
    ]
