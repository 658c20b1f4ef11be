"""The context of a create request: the history it continues (a conversation or a response chain) and
its input as typed items, with ids, resolved references, and checks on what a model cannot read."""

from __future__ import annotations

import re
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from itertools import compress, filterfalse, repeat
from operator import attrgetter, is_
from typing import Any

from responsa.protocol import (
    ITEM_TYPES,
    LONG_CONTEXT,
    TERMINAL_STATUSES,
    Conflict,
    CreateResponseRequest,
    FunctionCall,
    FunctionCallOutput,
    InputFile,
    InputText,
    InvalidRequest,
    Item,
    ItemReference,
    KeptContexts,
    Message,
    NotFound,
    OutputText,
    Reasoning,
    UnknownItem,
    UnknownPart,
    new_id,
    unvalidated,
)
from responsa.store import Store

from ..tools import ToolRegistry

__all__ = [
    "ContextChecks",
    "ContextScan",
    "conversation_items",
    "load_history",
    "normalize_input",
    "resolve_items",
    "with_files",
]

_ID_PREFIX = {"message": "msg", "reasoning": "rs", "compaction": "cmp"}
"""Of the ids of items that are no tool kind's (those say theirs)."""


async def load_history(store: Store, request: CreateResponseRequest) -> list[Item]:
    """The context before this request's input: the conversation's items or the response chain."""
    conversation_id = request.conversation_id
    if conversation_id is not None:
        return await _conversation_history(store, conversation_id)
    previous_id = request.previous_response_id
    if previous_id is None:
        return []
    previous = await store.get_response(previous_id)
    if previous is None:
        raise NotFound(
            f"Previous response with id '{previous_id}' not found.",
            param="previous_response_id",
            code="previous_response_not_found",
        )
    if previous.status not in TERMINAL_STATUSES:
        raise Conflict(
            f"Previous response '{previous_id}' is still {previous.status}; wait for it to finish.",
            param="previous_response_id",
            code="previous_response_in_progress",
        )
    return await store.load_context(previous_id) or []


_CLIENT_CONVERSATION_ID = re.compile(r"[A-Za-z0-9._:-]{1,64}")
"""The ids a client may begin a conversation by (``--conversations-on-first-use``): a path segment."""


async def _conversation_history(store: Store, conversation_id: str) -> list[Item]:
    """The conversation's items; with ``conversations_on_first_use``, none for a conversation the client
    names that does not exist yet (the response's save begins it with this turn, as mlxcel's do), else
    OpenAI's 400 or 404."""
    retention = store.retention
    if not retention.conversations_enabled:
        raise InvalidRequest("Conversation storage is disabled on this server.", param="conversation")
    first_use = retention.conversations_on_first_use
    if not (conversation_id.startswith("conv_") or (first_use and _CLIENT_CONVERSATION_ID.fullmatch(conversation_id))):
        expected = "letters, digits, '.', '_', ':' or '-' (at most 64)" if first_use else "begins with 'conv_'"
        raise InvalidRequest(
            f"Invalid 'conversation': '{conversation_id}'. Expected an ID that {expected}.",
            param="conversation",
            code="invalid_conversation_id",
        )
    conversations = store.conversations()
    items = await conversations.load_conversation(conversation_id)
    if items is not None:
        return items
    if not first_use:
        raise NotFound(f"Conversation with id '{conversation_id}' not found.", param="conversation")
    if await conversations.id_taken(conversation_id):
        items = await conversations.load_conversation(conversation_id)  # begun meanwhile by a turn of ours
        if items is not None:
            return items
        raise Conflict(  # another tenant's, or expired and not yet swept
            f"The conversation id '{conversation_id}' is taken on this server; choose another.",
            param="conversation",
            code="conversation_id_taken",
        )
    return []


async def normalize_input(store: Store, request: CreateResponseRequest, kinds: ToolRegistry) -> list[Item]:
    """The request's input as typed items with ids (of their kinds' prefixes), content parts and resolved
    ``item_reference``s (see :func:`checked_context` for what is checked against the history)."""
    raw = request.input
    if raw is None:
        return []
    if isinstance(raw, str):  # a user message made here, as resolving one would leave it (unvalidated: 2 µs less)
        text = unvalidated(InputText, {"text": raw})
        given = {"id": new_id("msg"), "role": "user", "content": [text], "status": "completed"}
        return [unvalidated(Message, given)]
    return await resolve_items(store, raw, "input", kinds)


@dataclass(slots=True)
class ContextScan:
    """What a turn's checks read of its context, taken once: its items' classes (for every check that
    looks for a kind of item: each such scan of a 1,000-item conversation costs 10-15 µs), whether a
    message has an ``input_file`` part, and the ids of the calls that outputs must answer, by class
    (of a long context: see ``ContextChecks``). Never changed once made (not frozen: 0.5 µs less)."""

    classes: frozenset[type]
    has_files: bool
    calls: Mapping[type[Item], frozenset[str]]


_NOTHING = ContextScan(frozenset(), False, {})


class ContextChecks:
    """Contexts checked, and each one's scan kept for the next turn of its chain or conversation: a
    context that begins with a kept one's items (the same objects) is scanned past them only, so a
    turn costs the same at the 400th as at the first (see docs/performance.md, "Long sessions").

    A context's history is kept scanned too: a chain's or a conversation's next turn gets the items of
    this one's history again, but its input (and output) as new objects, read back from the store."""

    def __init__(self, kinds: ToolRegistry) -> None:
        self._answers = kinds.answers
        """The kinds whose outputs need their calls (the function's): output class to call class."""
        self._scans = KeptContexts[_Scanned]()

    def checked(self, history: Sequence[Item], items: Sequence[Item]) -> tuple[list[Item], ContextScan]:
        """The context (the history, then the input) and its scan; 400 when a function call output in
        it answers no call."""
        context = [*history, *items]
        if len(context) < LONG_CONTEXT:  # its calls are found only if an output needs them
            classes = frozenset(map(type, context))
            scan = ContextScan(classes, Message in classes and any(map(with_files, context)), {})
            self._check_answers(scan, context)
            return context, scan
        scan, start = _NOTHING, 0
        found = self._scans.find(context)
        if found is not None:
            kept, scanned, same = found
            if same == len(kept):
                scan, start = scanned.scan, same
            elif same >= scanned.cut:
                scan, start = scanned.at_cut, scanned.cut
        cut = max(len(history), start)
        at_cut = self._extended(scan, context[start:cut])
        scan = self._extended(at_cut, context[cut:])
        self._check_answers(scan, context[start:])  # what was kept was checked
        self._scans.keep(list(context), _Scanned(cut, at_cut, scan))  # a copy: the run may add to its own
        return context, scan

    def _extended(self, scan: ContextScan, items: Sequence[Item]) -> ContextScan:
        """``scan`` with ``items`` after what it scanned (sorted by exact type at C speed, with no Python
        step per item but for messages' parts)."""
        if not items:
            return scan
        types = list(map(type, items))
        classes = scan.classes.union(types)
        has_files = scan.has_files or (Message in classes and any(map(with_files, items)))
        calls = dict(scan.calls)
        for call in self._answers.values():
            made = set(map(_call_id, compress(items, map(is_, types, repeat(call)))))
            known = calls.get(call, frozenset())
            calls[call] = known.union(made) if made else known
        return ContextScan(classes, has_files, calls)

    def _check_answers(self, scan: ContextScan, items: Sequence[Item]) -> None:
        """Every output of ``items`` (the end of the context ``scan`` is of, or all of a short one whose
        scan holds no calls) answers a call of the context."""
        for output, call in self._answers.items():
            if output not in scan.classes:  # most contexts have none
                continue
            types = list(map(type, items))
            known = scan.calls.get(call)
            if known is None:
                known = frozenset(map(_call_id, compress(items, map(is_, types, repeat(call)))))
            answers = map(_call_id, compress(items, map(is_, types, repeat(output))))
            unanswered = next(filterfalse(known.__contains__, answers), None)
            if unanswered is not None:
                what = str(output.model_fields["type"].default).replace("_", " ")
                raise InvalidRequest(f"No tool call found for {what} with call_id {unanswered}.", param="input")


@dataclass(frozen=True, slots=True)
class _Scanned:
    """A context's scan, and that of its first ``cut`` items (its history, or what was kept of it)."""

    cut: int
    at_cut: ContextScan
    scan: ContextScan


def with_files(item: Item) -> bool:
    """Whether ``item`` is a message with an ``input_file`` part (most contexts have none)."""
    return type(item) is Message and type(item.content) is not str and any(type(p) is InputFile for p in item.content)


async def resolve_items(
    store: Store, raw: Sequence[Item], param: str, kinds: ToolRegistry, copies: bool = False
) -> list[Item]:
    """Items as they will be stored: ids and statuses filled in, ``item_reference``s replaced (by a
    copy with its own id when ``copies``: an item added to a conversation is that conversation's own)."""
    items: list[Item] = []
    for index, item in enumerate(raw):
        if isinstance(item, ItemReference):
            found = await store.get_item(item.id)
            if found is None:
                raise NotFound(f"Item with id '{item.id}' not found.", param=f"{param}[{index}].id")
            items.append(found.model_copy(update={"id": _new_item_id(kinds, found.type)}) if copies else found)
        else:
            _check_type(item, f"{param}[{index}]", kinds)
            _check_parts(item, f"{param}[{index}]")
            items.append(_with_defaults(item, kinds))
    return items


def _check_type(item: Item, param: str, kinds: ToolRegistry) -> None:
    """An item of a type nothing here reads is a 400 naming it, as OpenAI answers (never kept and
    ignored); a tool kind's own items and vendor-prefixed ones (``acme:thing``, which the Open Responses
    specification has round-trip) are kept."""
    if type(item) is UnknownItem and ":" not in item.type and kinds.id_prefix(item.type) is None:
        raise InvalidRequest(
            f"Invalid value: {item.type!r}. Supported values are: {', '.join(sorted(ITEM_TYPES))} "
            "(and the item types of the tools served here).",
            param=f"{param}.type",
            code="invalid_value",
        )


def _check_parts(item: Item, param: str) -> None:
    """A content part no model here reads is a 400, never dropped; vendor-prefixed ones
    (``acme:thing``) are extensions, kept as sent."""
    if isinstance(item, Message):
        field, content = "content", item.content
    elif isinstance(item, FunctionCallOutput):
        field, content = "output", item.output
    else:
        return
    if isinstance(content, str):
        return
    for index, part in enumerate(content):
        if isinstance(part, UnknownPart) and ":" not in part.type:
            raise InvalidRequest(
                f"Invalid content part type {part.type!r}: expected one of input_text, input_image, input_file, "
                "output_text, refusal (or Chat Completions' text, image_url, file).",
                param=f"{param}.{field}[{index}].type",
                code="invalid_value",
            )


def _new_item_id(kinds: ToolRegistry, item_type: str) -> str:
    return new_id(kinds.id_prefix(item_type) or _ID_PREFIX.get(item_type, "item"))


def conversation_items(items: Sequence[Item], kinds: ToolRegistry) -> list[Item]:
    """Items as a conversation keeps them: each with its own id (to be fetched and deleted one by one)
    and ``created_at`` (as SGLang lists them); copies, so a response's output is left as it was."""
    now = int(time.time())
    stamped = []
    for item in items:
        fields: dict[str, Any] = {}
        if getattr(item, "id", None) is None:
            fields["id"] = _new_item_id(kinds, item.type)
        if getattr(item, "created_at", None) is None:
            fields["created_at"] = now
        stamped.append(item.model_copy(update=fields) if fields else item)
    return stamped


def _with_defaults(item: Item, kinds: ToolRegistry) -> Item:
    item = item.model_copy()
    if isinstance(item, Message) and isinstance(item.content, str):
        part = OutputText(text=item.content) if item.role == "assistant" else InputText(text=item.content)
        item.content = [part]
    if isinstance(item, Message | FunctionCall | FunctionCallOutput | Reasoning):
        if item.id is None:
            item.id = _new_item_id(kinds, item.type)
        if item.status is None:
            item.status = "completed"
    return item


_call_id = attrgetter("call_id")
