"""Compaction: an engine service beside the responses service.

A ``compaction`` item stands for a summary of the conversation before it, written by the model
(or by the simulator itself), sealed so the client cannot read or alter it. When a later request
sends it back, :meth:`Compactor.expand` puts the summary in its place for the model.
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
    CompactionObject,
    CompactionTrigger,
    ConfigurationUpdate,
    CreateResponseRequest,
    InputText,
    InvalidRequest,
    Item,
    Message,
    Reasoning,
    UnknownItem,
    item_text,
    new_id,
)
from responsa.store import Store

from ..._tenant_views import tenant_view
from ...output import usage_of
from ...tools import ToolRegistry
from .._context import checked_context, load_history, normalize_input
from ._reasoning_seal import ReasoningSeal
from ._sealing import Sealer

__all__ = ["SUMMARY_INSTRUCTIONS", "Compactor", "asks_compaction", "transcript"]

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

    def reasoning_seal(self) -> ReasoningSeal:
        """Seals this tenant's reasoning with the key that seals its compactions."""
        return ReasoningSeal(self._sealer, self.tenant)

    def _seal(self, summary: str) -> str:
        return self._sealer.seal(summary, self.tenant)

    async def _context(self, request: CreateResponseRequest) -> list[Item]:
        history = await load_history(self._store, request)
        context, _classes = checked_context(
            history, await normalize_input(self._store, request, self._kinds), self._kinds
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
