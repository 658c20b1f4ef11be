"""The storage interface: one repository protocol per kind of object (responses, conversations, files,
vector stores), which SQLite and PostgreSQL both implement. Each repository sees one tenant's objects
(``tenant``); ``scoped`` makes the view of another tenant, the one convention for tenancy."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

from responsa.protocol import Conversation, FileObject, Item, ResponseObject

__all__ = [
    "PART_BYTES",
    "ConversationRepository",
    "FileRepository",
    "ItemPage",
    "LoggedEvent",
    "Order",
    "ResponseFilter",
    "ResponsePage",
    "ResponseRepository",
    "Retention",
    "Store",
    "StoreHealth",
]

Order = Literal["asc", "desc"]


@dataclass(frozen=True)
class ItemPage:
    """One page of a listing; ``has_more`` says whether a next page exists."""

    items: list[Item]
    has_more: bool


@dataclass(frozen=True)
class ResponseFilter:
    """Which responses a listing shows; unset fields do not filter."""

    model: str | None = None
    status: str | None = None
    metadata: Mapping[str, str] = field(default_factory=dict)
    created_after: int | None = None
    """Created at or after this Unix time (seconds)."""
    created_before: int | None = None
    """Created before this Unix time (seconds)."""
    previous_response_id: str | None = None
    conversation: str | None = None
    """The id of the conversation the responses belong to."""


@dataclass(frozen=True)
class ResponsePage:
    """One page of a listing of responses; ``has_more`` says whether a next page exists."""

    responses: list[ResponseObject]
    has_more: bool


@dataclass(frozen=True)
class LoggedEvent:
    """One streamed event of a background response, as sent: resumable by sequence number."""

    sequence_number: int
    type: str
    data: str
    """The event's JSON."""


@dataclass(frozen=True)
class Retention:
    """How long objects are kept, and how conversations begin. A TTL of 0 keeps them forever; ``None``
    entries means no cap.

    A cap of 0 entries disables that kind of storage altogether (as in mlxcel, seed 002).
    """

    response_ttl: float = 0
    response_max_entries: int | None = None
    conversation_ttl: float = 0
    conversation_max_entries: int | None = None
    conversations_on_first_use: bool = False
    """Whether a response naming a conversation that does not exist begins it under that id (mlxcel)."""

    @property
    def responses_enabled(self) -> bool:
        return self.response_max_entries != 0

    @property
    def conversations_enabled(self) -> bool:
        return self.conversation_max_entries != 0

    @property
    def expires(self) -> bool:
        """Whether anything ever needs sweeping."""
        caps = (self.response_max_entries, self.conversation_max_entries)
        return bool(self.response_ttl or self.conversation_ttl) or any(cap for cap in caps)


class ResponseRepository(Protocol):
    """Responses with their input and output items, event logs, leases and cancel requests."""

    retention: Retention
    tenant: str
    """Whose objects this repository sees and creates (``scoped`` makes a view for another tenant)."""

    def scoped(self, tenant: str) -> ResponseRepository: ...

    async def save_response(
        self,
        response: ResponseObject,
        input_items: Sequence[Item] | None = None,
        append_to_conversation: Sequence[Item] = (),
        events: Sequence[LoggedEvent] = (),
        lease_until: float | None = None,
        timing: str | None = None,
    ) -> dict[str, Any]:
        """Insert a response (first save: ``input_items`` given, even empty) or update it; output replaced.
        Returns the response's JSON form as saved (``model_dump(mode="json")``, optional data and all),
        so that a caller sending it need not dump it again.

        In the same transaction: ``append_to_conversation`` items are appended to
        ``response.conversation``, contiguously, so two responses on one conversation never
        interleave; ``events`` join the response's event log (its end, stored with the state it
        announces); ``lease_until`` (first save) is the running process's first lease on it;
        ``timing`` is its timing record (JSON), kept when a later save gives none.
        """

    async def get_response(self, response_id: str) -> ResponseObject | None: ...

    async def get_timing(self, response_id: str) -> list[dict[str, Any]] | None:
        """The response's timing record, or None (none kept, or no such response)."""

    async def append_events(self, response_id: str, events: Sequence[LoggedEvent]) -> None:
        """Add to a response's event log (sequence numbers are unique per response)."""

    async def events_after(self, response_id: str, after: int, limit: int = 1000) -> list[LoggedEvent]:
        """Logged events with a sequence number above ``after``, in order."""

    async def renew_leases(self, response_ids: Sequence[str], until: float) -> None:
        """The running process still works on these responses until ``until``."""

    async def request_cancel(self, response_id: str) -> None:
        """Ask whichever process runs the response to stop it."""

    async def cancel_asks(self) -> int:
        """How many cancels were ever asked for, by any process (it changes with each ask)."""

    async def cancels_requested(self, response_ids: Sequence[str]) -> list[str]:
        """Which of these responses someone asked to cancel."""

    async def orphaned(self, now: float) -> list[tuple[str, ResponseObject]]:
        """(tenant, response) of responses queued or in progress whose lease ran out (or that never had
        one), of every tenant: nobody runs them any more."""

    async def claim_orphan(self, response_id: str, now: float, until: float) -> bool:
        """Take an orphaned response's lease until ``until``, atomically: ``False`` if it is not orphaned
        any more (another process claimed it first, or its holder renewed it)."""

    async def list_responses(
        self, wanted: ResponseFilter, *, limit: int, order: Order, after: str | None, before: str | None
    ) -> ResponsePage:
        """A page of this tenant's stored responses (ordered by creation; ``after``/``before`` are ids)."""

    async def delete_response(self, response_id: str) -> bool:
        """Remove a response and its items; False when it did not exist."""

    async def list_input_items(
        self, response_id: str, *, limit: int, order: Order, after: str | None, before: str | None
    ) -> ItemPage | None:
        """A page of the response's input items, or None when the response does not exist."""

    async def load_context(self, response_id: str) -> list[Item] | None:
        """Inputs and outputs of the response and all its predecessors, oldest first; None if absent."""

    async def get_item(self, item_id: str) -> Item | None:
        """Any stored input, output or conversation item by id (for ``item_reference``)."""


class ConversationRepository(Protocol):
    """Conversations and their items, in order."""

    retention: Retention
    tenant: str

    def scoped(self, tenant: str) -> ConversationRepository: ...

    async def create_conversation(self, conversation: Conversation, items: Sequence[Item]) -> None: ...

    async def id_taken(self, conversation_id: str) -> bool:
        """Whether any tenant's conversation has this id, live or expired and not yet swept (a client
        that names its conversations, as mlxcel's do, begins one on a free id: the response's save
        begins it with its first turn, see ``Retention.conversations_on_first_use``)."""

    async def get_conversation(self, conversation_id: str) -> Conversation | None: ...

    async def update_conversation_metadata(
        self, conversation_id: str, patch: Mapping[str, str | None] | None
    ) -> Conversation | None:
        """Merge ``patch`` (``None`` values delete keys; ``None`` patch clears all) atomically."""

    async def delete_conversation(self, conversation_id: str) -> bool: ...

    async def append_conversation_items(self, conversation_id: str, items: Sequence[Item]) -> bool:
        """Append contiguously; False when the conversation does not exist."""

    async def list_conversation_items(
        self, conversation_id: str, *, limit: int, order: Order, after: str | None, before: str | None
    ) -> ItemPage | None: ...

    async def get_conversation_item(self, conversation_id: str, item_id: str) -> Item | None: ...

    async def delete_conversation_item(self, conversation_id: str, item_id: str) -> bool: ...

    async def load_conversation(self, conversation_id: str) -> list[Item] | None:
        """Every item of the conversation, oldest first; None if it does not exist."""


class Store(ResponseRepository, Protocol):
    """Responses, with conversations composed on the same database (a response's save appends its turn
    to its conversation in the same transaction), and the database's own life: schema, expiry, closing."""

    def scoped(self, tenant: str) -> Store:
        """The same store, seeing only ``tenant``'s objects."""

    def conversations(self) -> ConversationRepository:
        """The conversations of this store's tenant."""

    async def migrate(self) -> None:
        """Bring the schema up to date (idempotent)."""

    async def sweep(self) -> int:
        """Remove what retention says has expired, with its items; returns how many objects went."""

    async def aclose(self) -> None: ...


class FileRepository(Protocol):
    """Files: rows, and their bytes in parts (the row, written last, commits an upload)."""

    tenant: str

    def scoped(self, tenant: str) -> FileRepository: ...

    async def write_file_part(self, file_id: str, position: int, data: bytes) -> None: ...

    async def commit_file(self, file: FileObject, sha256: str) -> None: ...

    async def discard_file_parts(self, file_id: str) -> None: ...

    async def get_file(self, file_id: str) -> FileObject | None: ...

    async def list_files(
        self, *, purpose: str | None, limit: int, order: Order, after: str | None
    ) -> tuple[list[FileObject], bool]: ...

    async def file_part(self, file_id: str, position: int) -> bytes | None: ...

    async def file_name(self, file_id: str) -> str | None: ...

    async def delete_file(self, file_id: str) -> bool: ...


@dataclass
class StoreHealth:
    """What the store's last write found: ``failing`` is the reason it could not write, ``None`` when it could."""

    failing: str | None = None
    since: float | None = None

    def as_json(self) -> dict[str, object]:
        if self.failing is None:
            return {"status": "ok"}
        return {"status": "failing", "error": self.failing, "since": self.since}


PART_BYTES = 256 * 1024
"""The size of the parts a file's bytes are stored in."""
