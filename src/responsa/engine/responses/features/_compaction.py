"""Compaction: an engine service beside the responses service, and the request feature a create uses it by.

A ``compaction`` item stands for a summary of the conversation before it, written by the model
(or by the simulator itself), sealed so the client cannot read or alter it. When a later request
sends it back, :meth:`Compactor.expand` puts the summary in its place for the model. The feature
(``CompactionFeature``) is named by a request asking for compaction inside the create
(``context_management``) and by a context holding a ``compaction`` or ``compaction_trigger`` item.
"""

from __future__ import annotations

import json
import time
from collections.abc import Awaitable, Callable, Sequence

from responsa.backends import (
    Backend,
    BackendRegistry,
    Finish,
    ModelRequest,
    Sampling,
    Summarizes,
    TextDelta,
    TokenUsage,
)
from responsa.protocol import (
    Compaction,
    CompactionEvent,
    CompactionObject,
    CompactionTrigger,
    ConfigurationUpdate,
    CreateResponseRequest,
    InputText,
    InvalidRequest,
    Item,
    Message,
    OutputItemEvent,
    Reasoning,
    StreamEvent,
    UnknownItem,
    item_text,
    new_id,
)
from responsa.store import Store

from ..._tenant_views import tenant_view
from ...output import usage_of
from ...tools import Recorded, ToolRegistry, Where
from .._context import ContextChecks, load_history, normalize_input
from ._features import Answer, Count, FeatureRun, Fitted
from ._sealing import Sealer

__all__ = ["SUMMARY_INSTRUCTIONS", "CompactionFeature", "Compactor", "asks_compaction", "transcript"]

SUMMARY_INSTRUCTIONS = (
    "You compact conversations so they can go on in less space. Summarize the conversation you are "
    "given: keep every fact, decision, name, number, file, command and open task needed to continue "
    "it, and drop pleasantries. Write only the summary."
)
SUMMARY_MAX_TOKENS = 512
EXPANDED_HEADER = "Summary of the earlier conversation (compacted):\n"
LINE_LIMIT = 4000
"""Characters of one item kept in the transcript: a long command output must not crowd out the rest."""
_NOT_TRANSCRIBED = {"id", "type", "status", "call_id", "encrypted_content"}
REPLACES_PRIOR = "\x1ereplaces-prior\n"
"""Marks a summary made inside a create: it covers everything before its item, which is then not read."""


def transcript(items: Sequence[Item], kinds: ToolRegistry) -> str:
    """The conversation as plain text, one line per item, for the model to summarize. Every kind of
    tool call and output is kept (shell, MCP, custom, search, code, a plug-in's...): a kind with a
    ``transcribe`` writes its items' lines (None: the plain one), the rest are written as their type
    and fields; each line is cut at ``LINE_LIMIT`` characters."""
    lines: list[str] = []
    for item in items:
        kind = kinds.for_item(item.type)
        if isinstance(item, Message):
            line = f"{item.role}: {item_text(item)}"
        elif kind is None and isinstance(item, _UNREAD):
            continue  # hidden reasoning, markers, items no model reads
        elif (own := getattr(kind, "transcribe", None)) is not None and (written := own(item)) is not None:
            line = written
        else:
            fields = item.model_dump(mode="json", exclude=_NOT_TRANSCRIBED, exclude_none=True)
            line = f"{item.type}: {json.dumps(fields, ensure_ascii=False)}"
        lines.append(line if len(line) <= LINE_LIMIT else line[:LINE_LIMIT] + "…")
    return "\n".join(lines)


_UNREAD = (Reasoning, Compaction, CompactionTrigger, ConfigurationUpdate, UnknownItem)


def asks_compaction(items: Sequence[Item]) -> bool:
    """Whether the input ends with a ``compaction_trigger``; one anywhere else is a 400."""
    if CompactionTrigger not in map(type, items):  # at C speed: most inputs have none
        return False
    last = len(items) - 1
    for index, item in enumerate(items):
        if isinstance(item, CompactionTrigger) and index != last:
            message = "A 'compaction_trigger' item must be the last input item."
            raise InvalidRequest(message, param=f"input[{index}]", code="invalid_value")
    return True


class Compactor:
    """Writes compaction items and opens them again."""

    def __init__(self, store: Store, backends: BackendRegistry, sealer: Sealer, kinds: ToolRegistry) -> None:
        self._store = store
        self._backends = backends
        self._kinds = kinds
        self._sealer = sealer
        self._views: dict[str, Compactor] = {}

    @property
    def tenant(self) -> str:
        """Whose compactions this compactor writes and opens (``for_tenant`` makes the view of another)."""
        return self._store.tenant

    def for_tenant(self, tenant: str) -> Compactor:
        return tenant_view(self._views, tenant, self._view)

    def _view(self, tenant: str) -> Compactor:
        return Compactor(self._store.scoped(tenant), self._backends, self._sealer, self._kinds)

    def _seal(self, summary: str) -> str:
        return self._sealer.seal(summary, self.tenant)

    async def _context(self, request: CreateResponseRequest) -> list[Item]:
        history = await load_history(self._store, request)
        context, _scan = ContextChecks(self._kinds).checked(
            history, await normalize_input(self._store, request, self._kinds)
        )
        return self.expand(context)

    async def compact(self, request: CreateResponseRequest) -> CompactionObject:
        """The user's messages verbatim, then one ``compaction`` item standing for the whole context."""
        backend = self._backends.resolve(request.model)
        context = await self._context(request)
        sealed, tokens = await self.compact_all(backend, request.model, context)
        kept = [item for item in context if isinstance(item, Message) and item.role == "user"]
        usage = usage_of(tokens)
        return CompactionObject(id=new_id("resp"), created_at=int(time.time()), output=[*kept, sealed], usage=usage)

    async def compact_all(self, backend: Backend, model: str, context: Sequence[Item]) -> tuple[Compaction, TokenUsage]:
        """One sealed ``compaction`` item standing for all of ``context`` (what ``/responses/compact``
        returns, and what a create whose input ends with a ``compaction_trigger`` answers), and what
        writing its summary cost."""
        summary, tokens = await self._summarize(backend, model, context)
        return Compaction(id=new_id("cmp"), encrypted_content=self._seal(summary)), tokens

    async def _summarize(self, backend: Backend, model: str, context: Sequence[Item]) -> tuple[str, TokenUsage]:
        text = transcript(context, self._kinds)
        own = backend.summarize(text) if isinstance(backend, Summarizes) else None
        if own is not None:
            return own
        ask = ModelRequest(
            model=model,
            instructions=SUMMARY_INSTRUCTIONS,
            items=[Message(role="user", content=[InputText(text=text)])],
            tool_mode="none",
            max_output_tokens=SUMMARY_MAX_TOKENS,
            sampling=Sampling(temperature=0),
            streaming=False,
        )
        pieces: list[str] = []
        tokens = TokenUsage(0, 0)
        async with backend.stream(ask) as batches:
            async for batch in batches:
                for event in batch:
                    if isinstance(event, TextDelta):
                        pieces.append(event.text)
                    elif isinstance(event, Finish):
                        tokens = event.usage
        return "".join(pieces).strip(), tokens

    def expand(self, items: Sequence[Item]) -> list[Item]:
        """``items`` with each compaction item replaced by the summary it stands for."""
        if Compaction not in map(type, items):  # a scan at C speed: it runs on every turn, over every item
            return list(items)
        expanded: list[Item] = []
        for index, item in enumerate(items):
            if not isinstance(item, Compaction):
                expanded.append(item)
                continue
            summary = self._sealer.open(item.encrypted_content, self.tenant)
            if summary is not None and summary.startswith(REPLACES_PRIOR):
                summary, expanded = summary.removeprefix(REPLACES_PRIOR), []
            if summary is None:
                raise InvalidRequest(
                    "The compaction item's 'encrypted_content' could not be opened: it was made by another "
                    "server (or with another --secret-key), or it was altered.",
                    param=f"input[{index}].encrypted_content",
                    code="invalid_encrypted_content",
                )
            expanded.append(_summary_message(summary))
        return expanded

    async def compact_within(
        self,
        request: CreateResponseRequest,
        backend: Backend,
        context: list[Item],
        count: Callable[[list[Item]], Awaitable[int]],
    ) -> tuple[Compaction | None, list[Item]]:
        """Compaction inside a create (``context_management``): when the context reaches the threshold,
        the item that stands for all of it, and the context the model reads instead (the summary,
        then the newest input from its last user message on); else no item and the context as it is."""
        threshold = request.compact_threshold()
        if threshold is None or await count(context) < threshold:
            return None, context
        summary, _usage = await self._summarize(backend, request.model, context)
        sealed = Compaction(
            id=new_id("cmp"), encrypted_content=self._sealer.seal(REPLACES_PRIOR + summary, self.tenant)
        )
        users = [index for index, item in enumerate(context) if isinstance(item, Message) and item.role == "user"]
        tail = context[users[-1] :] if users else []
        return sealed, [_summary_message(summary), *tail]


def _summary_message(summary: str) -> Message:
    return Message(role="developer", content=[InputText(text=EXPANDED_HEADER + summary)])


class CompactionFeature:
    """Compaction in a create: ``context_management``, and ``compaction`` / ``compaction_trigger`` items."""

    name = "compaction"
    items: frozenset[type] = frozenset({Compaction, CompactionTrigger})
    fields: frozenset[str] = frozenset({"context_management"})

    def __init__(self, compactor: Compactor) -> None:
        self._compactor = compactor

    def open(self, request: CreateResponseRequest, context_types: frozenset[type]) -> FeatureRun | None:
        named = request.compact_threshold() is not None or not self.items.isdisjoint(context_types)
        return _CompactionRun(self._compactor, request) if named else None


class _CompactionRun(FeatureRun):
    def __init__(self, compactor: Compactor, request: CreateResponseRequest) -> None:
        self._compactor = compactor
        self._request = request
        given = request.input if isinstance(request.input, list) else ()
        self._asked = asks_compaction(given)
        """The input ends with a ``compaction_trigger``: the response is the compaction of its context."""

    async def plan(
        self, store: Store, request: CreateResponseRequest, context: Sequence[Item]
    ) -> CreateResponseRequest:
        self._compactor = self._compactor.for_tenant(store.tenant)
        return request

    def read(self, context: list[Item]) -> list[Item]:
        return self._compactor.expand(context)  # the summaries in place of compaction items

    async def answer(
        self, backend: Backend, context: list[Item], build: Callable[[list[Item]], ModelRequest]
    ) -> Answer | None:
        """One ``compaction`` item standing for the whole context, which the model summarized."""
        if not self._asked:
            return None
        read = [item for item in context if not isinstance(item, CompactionTrigger)]
        compaction, usage = await self._compactor.compact_all(backend, self._request.model, read)
        return Answer([_recorded(compaction)], usage)

    async def fit(self, backend: Backend, context: list[Item], count: Count) -> Fitted | None:
        compaction, context = await self._compactor.compact_within(self._request, backend, context, count)
        return Fitted(context, [_recorded(compaction)]) if compaction is not None else None


def _recorded(item: Compaction) -> Recorded:
    """A compaction made before the model ran: added, compacting, done, at once."""

    def events(where: Where) -> list[StreamEvent]:
        index = where["output_index"]
        return [
            OutputItemEvent(type="response.output_item.added", output_index=index, item=item),
            CompactionEvent(**where),
            OutputItemEvent(type="response.output_item.done", output_index=index, item=item),
        ]

    return Recorded(item, events)
