"""The store's statements, built once with named parameters.

Building a SQLAlchemy statement costs several times what running it on SQLite does (about 300 µs
against 60 µs for a two-condition select on the benchmark machine), so the store never builds
one per call. Parameters: ``tenant`` and ``oldest`` (the earliest ``stored_at`` still alive, -1 when
nothing expires) scope every lookup to what the caller may see.
"""

from __future__ import annotations

from sqlalchemy import BindParameter, bindparam, delete, func, insert, select, text, update
from sqlalchemy.dialects import postgresql

from ._tables import (
    cancel_asks,
    conversation_items,
    conversations,
    response_events,
    response_items,
    response_removals,
    responses,
)

__all__ = [
    "APPEND_EVENTS",
    "ASK_CANCEL",
    "CANCELS_ASKED",
    "CANCEL_ASKS",
    "CONTEXT",
    "CONVERSATION",
    "CONVERSATION_FOR_UPDATE",
    "CONVERSATION_ITEM",
    "CONVERSATION_ITEMS_AFTER",
    "CONVERSATION_ITEMS_REMOVED",
    "CONVERSATION_TENANT",
    "DELETE_CONVERSATION_ITEM",
    "DELETE_OUTPUTS",
    "EVENTS_AFTER",
    "INSERT_CONVERSATION",
    "INSERT_CONVERSATION_IF_NEW",
    "INSERT_CONVERSATION_ITEMS",
    "INSERT_ITEMS",
    "INSERT_RESPONSE",
    "LOCK_CONVERSATION",
    "NEXT_POSITION",
    "NOW",
    "OUTPUTS",
    "OWN_ITEMS",
    "RENEW_LEASES",
    "RESPONSES_REMOVED",
    "RESPONSE_BODY",
    "RESPONSE_EXISTS",
    "RESPONSE_LINK",
    "SET_METADATA",
    "TIMING",
    "UPDATE_RESPONSE",
]

NOW: BindParameter[float] = bindparam("now")
"""The time a poll looks at (the batch runner's and the webhook deliverer's, each second in every
process, finding nothing most of the time): their statements are built once with it."""

_r, _i, _e = responses.c, response_items.c, response_events.c
_c, _ci = conversations.c, conversation_items.c
_live_response = (_r.tenant == bindparam("tenant"), _r.stored_at >= bindparam("oldest"))
_live_conversation = (_c.tenant == bindparam("tenant"), _c.stored_at >= bindparam("oldest"))

INSERT_RESPONSE = insert(responses)
UPDATE_RESPONSE = (
    update(responses)
    .where(_r.id == bindparam("response_id"), _r.tenant == bindparam("owner"))
    .values(
        status=bindparam("new_status"),
        body=bindparam("new_body"),
        timing=func.coalesce(bindparam("new_timing"), _r.timing),
    )
)
RESPONSE_EXISTS = select(_r.id).where(_r.id == bindparam("response_id"), *_live_response)
RESPONSE_LINK = select(_r.status, _r.previous_response_id).where(_r.id == bindparam("response_id"), *_live_response)
RESPONSE_BODY = select(_r.body).where(_r.id == bindparam("response_id"), *_live_response)
_ids = _r.id.in_(bindparam("ids", expanding=True))
TIMING = select(_r.timing).where(_r.id == bindparam("response_id"), *_live_response)
RENEW_LEASES = update(responses).where(_ids).values(lease_until=bindparam("until"))
CLAIM_ORPHAN = (
    update(responses)
    .where(
        _r.id == bindparam("response_id"),
        _r.status.in_(("queued", "in_progress")),
        _r.lease_until.is_(None) | (_r.lease_until < bindparam("now")),
    )
    .values(lease_until=bindparam("until"))
)
ASK_CANCEL = update(responses).where(_r.id == bindparam("response_id")).values(cancel_requested=True)
CANCELS_ASKED = select(_r.id).where(_ids, _r.cancel_requested)
CANCEL_ASKS = select(cancel_asks.c.asked).where(cancel_asks.c.id == 1)

INSERT_ITEMS = insert(response_items)
DELETE_OUTPUTS = delete(response_items).where(_i.response_id == bindparam("response_id"), _i.role == "output")
OUTPUTS = select(_i.body).where(_i.response_id == bindparam("response_id"), _i.role == "output").order_by(_i.position)
OWN_ITEMS = select(_i.body).where(_i.response_id == bindparam("response_id")).order_by(_i.role, _i.position)
CONTEXT = text(
    """
    WITH RECURSIVE chain(id, prev, depth) AS (
        SELECT id, previous_response_id, 0 FROM responses WHERE id = :response_id
        UNION ALL
        SELECT r.id, r.previous_response_id, chain.depth + 1
        FROM responses r JOIN chain ON r.id = chain.prev
    )
    SELECT i.body FROM chain JOIN response_items i ON i.response_id = chain.id
    ORDER BY chain.depth DESC, i.role ASC, i.position ASC
    """
)

APPEND_EVENTS = insert(response_events)
EVENTS_AFTER = (
    select(_e.sequence_number, _e.type, _e.body)
    .where(
        _e.response_id == bindparam("response_id"),
        _e.sequence_number > bindparam("after"),
        select(_r.id).where(_r.id == bindparam("response_id"), _r.tenant == bindparam("tenant")).exists(),
    )
    .order_by(_e.sequence_number)
    .limit(bindparam("limit"))
)

INSERT_CONVERSATION = insert(conversations)
INSERT_CONVERSATION_IF_NEW = postgresql.insert(conversations).on_conflict_do_nothing()
"""``INSERT … ON CONFLICT DO NOTHING``, which SQLite (3.24 and later) reads as PostgreSQL does."""
CONVERSATION_TENANT = select(_c.tenant).where(_c.id == bindparam("conversation_id"))
"""Whose conversation the id is, expired or not (None: the id is free)."""
CONVERSATION = select(_c.id, _c.created_at, _c.metadata).where(
    _c.id == bindparam("conversation_id"), *_live_conversation
)
CONVERSATION_FOR_UPDATE = CONVERSATION.with_for_update()
LOCK_CONVERSATION = select(_c.id).where(_c.id == bindparam("conversation_id")).with_for_update()
SET_METADATA = update(conversations).where(_c.id == bindparam("conversation_id")).values(metadata=bindparam("new"))
INSERT_CONVERSATION_ITEMS = insert(conversation_items)
NEXT_POSITION = select(func.coalesce(func.max(_ci.position), -1) + 1).where(
    _ci.conversation_id == bindparam("conversation_id")
)
CONVERSATION_ITEMS_AFTER = (
    select(_ci.position, _ci.body)
    .where(_ci.conversation_id == bindparam("conversation_id"), _ci.position > bindparam("position"))
    .order_by(_ci.position)
)
RESPONSES_REMOVED = select(response_removals.c.removed).where(response_removals.c.id == 1)
CONVERSATION_ITEMS_REMOVED = select(_c.items_removed).where(_c.id == bindparam("conversation_id"), *_live_conversation)
CONVERSATION_ITEM = (
    select(_ci.body).where(_ci.conversation_id == bindparam("conversation_id"), _ci.item_id == bindparam("item_id"))
).limit(1)
DELETE_CONVERSATION_ITEM = delete(conversation_items).where(
    _ci.conversation_id == bindparam("conversation_id"), _ci.item_id == bindparam("item_id")
)
