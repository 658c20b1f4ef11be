"""Webhook queries of the SQL store: endpoints, and the outbox of deliveries.

``announce`` is called inside the transaction that makes an event true (a background response's
final save, a batch's end): the event's deliveries, one per endpoint of the tenant that asked for its
type, commit with it or not at all. Deliveries are claimed by lease, so any process sends them, and
one whose sender stopped is sent again (at least once).
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from typing import Any

import orjson
from sqlalchemy import delete, func, insert, select, update

from responsa.protocol import new_id

from .._base import Order
from .._webhook_repository import Delivery, DueDelivery, WebhookEndpointRow, event_payload, secrets_of
from ._database import Database, Sql
from ._paging import keyed_page
from ._statements import NOW
from ._tables import webhook_deliveries, webhook_endpoints

__all__ = ["SqlWebhooks", "announce"]

_e, _d = webhook_endpoints.c, webhook_deliveries.c


def _due(now: Any) -> Any:
    """A delivery due at ``now`` (a time, or ``NOW``): pending and its time come, or sending and its lease
    run out (its sender gone)."""
    return (_d.state == "pending") & (_d.next_attempt_at <= now) | (_d.state == "sending") & (_d.lease_until < now)


_OWED = select(_d.endpoint_id).where(_due(NOW)).group_by(_d.endpoint_id).order_by(func.min(_d.next_attempt_at))
"""The endpoints with deliveries due, the longest owed first."""

LOG_KEPT_SECS = 30 * 24 * 3600.0
"""How long a delivered or given-up delivery stays in its endpoint's log."""

_ENDPOINT = (
    _e.id,
    _e.name,
    _e.url,
    _e.event_types,
    _e.secret,
    _e.created_at,
    _e.updated_at,
    _e.old_secret,
    _e.old_secret_until,
)
_DELIVERY = (
    _d.id,
    _d.endpoint_id,
    _d.event_type,
    _d.payload,
    _d.state,
    _d.attempts,
    _d.next_attempt_at,
    _d.last_status_code,
    _d.last_error,
    _d.created_at,
    _d.delivered_at,
)


def _endpoint_of(row: Any) -> WebhookEndpointRow:
    endpoint_id, name, url, types, secret, created_at, updated_at, old_secret, old_until = row
    return WebhookEndpointRow(
        endpoint_id, name, url, orjson.loads(types), secret, created_at, updated_at, old_secret, old_until
    )


def _endpoint_values(endpoint: WebhookEndpointRow) -> dict[str, Any]:
    return {
        "name": endpoint.name,
        "url": endpoint.url,
        "event_types": orjson.dumps(endpoint.event_types).decode(),
        "secret": endpoint.secret,
        "created_at": endpoint.created_at,
        "updated_at": endpoint.updated_at,
        "old_secret": endpoint.old_secret,
        "old_secret_until": endpoint.old_secret_until,
    }


def _delivery_row(delivery_id: str, endpoint_id: str, tenant: str, event_type: str, payload: str) -> dict[str, Any]:
    now = time.time()
    return {
        "id": delivery_id,
        "endpoint_id": endpoint_id,
        "tenant": tenant,
        "event_type": event_type,
        "payload": payload,
        "state": "pending",
        "attempts": 0,
        "next_attempt_at": now,
        "lease_until": None,
        "last_status_code": None,
        "last_error": None,
        "created_at": now,
        "delivered_at": None,
    }


def announce(conn: Sql, tenant: str, event_type: str, object_id: str, created_at: int) -> int:
    """Write the event's deliveries, in the caller's transaction; how many endpoints will receive it."""
    rows = conn.execute(select(_e.id, _e.event_types).where(_e.tenant == tenant)).all()
    wanting = [endpoint_id for endpoint_id, types in rows if event_type in orjson.loads(types)]
    if wanting:
        payload = event_payload(event_type, object_id, created_at)
        conn.execute(
            insert(webhook_deliveries),
            [_delivery_row(new_id("wh"), endpoint_id, tenant, event_type, payload) for endpoint_id in wanting],
        )
    return len(wanting)


class SqlWebhooks:
    def __init__(self, db: Database, tenant: str) -> None:
        self._db = db
        self.tenant = tenant

    def scoped(self, tenant: str) -> SqlWebhooks:
        return SqlWebhooks(self._db, tenant)

    async def create_endpoint(self, endpoint: WebhookEndpointRow) -> None:
        row = {"id": endpoint.id, "tenant": self.tenant, **_endpoint_values(endpoint)}
        await self._db.write(lambda conn: conn.execute(insert(webhook_endpoints), [row]))

    async def put_endpoint(self, endpoint: WebhookEndpointRow) -> None:
        values = _endpoint_values(endpoint)  # as it is now
        changed = update(webhook_endpoints).where(_e.id == endpoint.id).values(**values)
        row = {"id": endpoint.id, "tenant": self.tenant, **values}

        def work(conn: Sql) -> None:
            if not conn.execute(changed).rowcount:
                conn.execute(insert(webhook_endpoints), [row])

        await self._db.write(work)

    async def get_endpoint(self, endpoint_id: str) -> WebhookEndpointRow | None:
        query = select(*_ENDPOINT).where(_e.id == endpoint_id, _e.tenant == self.tenant)
        row = await self._db.read(lambda conn: conn.execute(query).first())
        return None if row is None else _endpoint_of(row)

    async def list_endpoints(self, *, limit: int, after: str | None) -> tuple[list[WebhookEndpointRow], bool]:
        query = keyed_page(
            select(*_ENDPOINT).where(_e.tenant == self.tenant),
            _e.id,
            limit=limit,
            order="desc",
            after=after,
            before=None,
        )
        rows = await self._db.read(lambda conn: conn.execute(query).all())
        return [_endpoint_of(row) for row in rows[:limit]], len(rows) > limit

    async def update_endpoint(self, endpoint: WebhookEndpointRow) -> bool:
        changed = (
            update(webhook_endpoints)
            .where(_e.id == endpoint.id, _e.tenant == self.tenant)
            .values(**_endpoint_values(endpoint))
        )
        return bool(await self._db.write(lambda conn: conn.execute(changed).rowcount))

    async def delete_endpoint(self, endpoint_id: str) -> bool:
        def work(conn: Sql) -> bool:
            gone = delete(webhook_endpoints).where(_e.id == endpoint_id, _e.tenant == self.tenant)
            if not conn.execute(gone).rowcount:
                return False
            conn.execute(delete(webhook_deliveries).where(_d.endpoint_id == endpoint_id))
            return True

        return await self._db.write(work)

    async def enqueue(self, endpoint_id: str, event_type: str, payload: str, delivery_id: str) -> None:
        row = _delivery_row(delivery_id, endpoint_id, self.tenant, event_type, payload)
        await self._db.write(lambda conn: conn.execute(insert(webhook_deliveries), [row]))

    async def claim_due(
        self, now: float, until: float, limit: int, per_endpoint: int, sending: Mapping[str, int]
    ) -> list[DueDelivery]:
        due = _due(now)

        def candidates(conn: Sql) -> list[Any]:
            rows: list[Any] = []
            for endpoint_id in conn.execute(_OWED, {"now": now}).scalars():
                take = min(per_endpoint - sending.get(endpoint_id, 0), limit - len(rows))
                if take > 0:
                    oldest = select(*_DELIVERY, *_ENDPOINT).join(webhook_endpoints, _e.id == _d.endpoint_id)
                    oldest = oldest.where(due, _d.endpoint_id == endpoint_id).order_by(_d.next_attempt_at)
                    rows += conn.execute(oldest.limit(take)).all()
                if len(rows) >= limit:
                    break
            return rows

        rows = await self._db.read(candidates)  # nothing due: no write lock taken
        if not rows:
            return []

        def work(conn: Sql) -> list[DueDelivery]:
            claimed = []
            for row in rows:
                delivery, endpoint = Delivery(*row[: len(_DELIVERY)]), _endpoint_of(row[len(_DELIVERY) :])
                taken = update(webhook_deliveries).where(_d.id == delivery.id, due)
                if conn.execute(taken.values(state="sending", lease_until=until)).rowcount:
                    claimed.append(DueDelivery(delivery, endpoint.url, secrets_of(endpoint, now)))
            return claimed

        return await self._db.write(work)

    async def record_attempt(
        self, delivery_id: str, *, delivered: bool, status_code: int | None, error: str | None, retry_at: float | None
    ) -> None:
        values: dict[str, Any] = {
            "attempts": _d.attempts + 1,
            "last_status_code": status_code,
            "last_error": error,
            "lease_until": None,
        }
        if delivered:
            values.update(state="delivered", delivered_at=time.time())
        elif retry_at is not None:
            values.update(state="pending", next_attempt_at=retry_at)
        else:
            values.update(state="failed")
        recorded = update(webhook_deliveries).where(_d.id == delivery_id, _d.state == "sending").values(**values)
        await self._db.write(lambda conn: conn.execute(recorded))

    async def deliveries(
        self, endpoint_id: str, *, limit: int, order: Order, after: str | None
    ) -> tuple[list[Delivery], bool]:
        scope = select(*_DELIVERY).where(_d.endpoint_id == endpoint_id, _d.tenant == self.tenant)
        query = keyed_page(scope, _d.id, limit=limit, order=order, after=after, before=None)
        rows = await self._db.read(lambda conn: conn.execute(query).all())
        return [Delivery(*row) for row in rows[:limit]], len(rows) > limit

    async def delivery(self, delivery_id: str) -> Delivery | None:
        query = select(*_DELIVERY).where(_d.id == delivery_id, _d.tenant == self.tenant)
        row = await self._db.read(lambda conn: conn.execute(query).first())
        return None if row is None else Delivery(*row)

    def sweep(self, conn: Sql) -> int:
        """Deliveries that ended (delivered or given up) more than :data:`LOG_KEPT_SECS` ago."""
        ended = _d.state.in_(("delivered", "failed")) & (_d.created_at < time.time() - LOG_KEPT_SECS)
        return conn.execute(delete(webhook_deliveries).where(ended)).rowcount
