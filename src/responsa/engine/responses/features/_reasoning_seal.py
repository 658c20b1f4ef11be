"""Encrypted reasoning that round-trips: ``reasoning.encrypted_content`` sealed by this server, and
reasoning that another server sealed withheld from the model (and said so) rather than failing.

Clients that keep no server state (Codex, ``store: false``) ask for ``include:
["reasoning.encrypted_content"]`` and send every reasoning item back on the next turn. The blob is
the item's reasoning (its text, its summary, and what the backend itself handed out) sealed with the
server's key (see ``Sealer``): any replica sharing the key opens it, after any restart. A reasoning
item whose blob this server cannot open (another provider's, another tenant's, altered) is left out
of what the model reads and listed in the response's ``input_transformations``, as OpenAI does for
reasoning it will not read (``reason: "organization_mismatch"``).

A request feature (``_features``), named by a request that asks for ``reasoning.encrypted_content`` (its
reasoning is sealed as each item ends) and by a context that holds reasoning (what it cannot open is
left out).
"""

from __future__ import annotations

import json
from collections.abc import Sequence

from responsa.protocol import CreateResponseRequest, Item, Reasoning, ResponseObject
from responsa.store import Store

from ...output import ENCRYPTED_REASONING
from ._features import FeatureRun
from ._sealing import Sealer

__all__ = ["ReasoningSeal", "ReasoningSealFeature"]

FOREIGN = "organization_mismatch"
"""OpenAI's reason for reasoning it withholds because another organization made it."""


class ReasoningSeal:
    """Seals this tenant's reasoning items and tells which ones sent back it can open."""

    def __init__(self, sealer: Sealer, tenant: str) -> None:
        self._sealer = sealer
        self._tenant = tenant

    def seal(self, item: Reasoning) -> None:
        """Put the item's reasoning, sealed, in its ``encrypted_content``."""
        kept = {
            "content": [part.text for part in item.content or ()],
            "summary": [part.text for part in item.summary],
            "backend": item.encrypted_content,
        }
        item.encrypted_content = self._sealer.seal(json.dumps(kept, separators=(",", ":")), self._tenant)

    def withhold_foreign(self, items: Sequence[Item]) -> tuple[list[Item], list[dict[str, str]]]:
        """``items`` without the reasoning items whose blob this server cannot open, and the
        ``input_transformations`` entries that say which were left out."""
        kept: list[Item] = []
        removed: list[dict[str, str]] = []
        for item in items:
            blob = item.encrypted_content if isinstance(item, Reasoning) else None
            if blob is not None and self._sealer.open(blob, self._tenant) is None:
                removed.append({"id": item.id or "", "type": "reasoning", "action": "removed", "reason": FOREIGN})
            else:
                kept.append(item)
        return kept, removed


class ReasoningSealFeature:
    """``include: ["reasoning.encrypted_content"]``, and reasoning sent back in the context."""

    name = ENCRYPTED_REASONING
    items: frozenset[type] = frozenset({Reasoning})
    fields: frozenset[str] = frozenset({"include"})

    def __init__(self, sealer: Sealer) -> None:
        self._sealer = sealer

    def open(self, request: CreateResponseRequest, context_types: frozenset[type]) -> FeatureRun | None:
        seals = ENCRYPTED_REASONING in (request.include or ())
        return _SealRun(self._sealer, seals) if seals or Reasoning in context_types else None


class _SealRun(FeatureRun):
    def __init__(self, sealer: Sealer, seals: bool) -> None:
        self._sealer = sealer
        self._seals = seals
        self._seal: ReasoningSeal | None = None
        self._withheld: list[dict[str, str]] = []

    async def plan(
        self, store: Store, request: CreateResponseRequest, context: Sequence[Item]
    ) -> CreateResponseRequest:
        self._seal = ReasoningSeal(self._sealer, store.tenant)
        return request

    def read(self, context: list[Item]) -> list[Item]:
        if self._seal is None or Reasoning not in map(type, context):  # at C speed
            return context
        context, self._withheld = self._seal.withhold_foreign(context)
        return context

    def begin(self, response: ResponseObject) -> None:
        if self._withheld:
            response.input_transformations = self._withheld

    def item_done(self, item: Item) -> None:
        if self._seals and self._seal is not None and isinstance(item, Reasoning):
            self._seal.seal(item)
