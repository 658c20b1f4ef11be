"""Encrypted reasoning that round-trips: ``reasoning.encrypted_content`` sealed by this server, and
reasoning that another server sealed withheld from the model (and said so) rather than failing.

Clients that keep no server state (Codex, ``store: false``) ask for ``include:
["reasoning.encrypted_content"]`` and send every reasoning item back on the next turn. The blob is
the item's reasoning (its text, its summary, and what the backend itself handed out) sealed with the
server's key (see ``Sealer``): any replica sharing the key opens it, after any restart. A reasoning
item whose blob this server cannot open (another provider's, another tenant's, altered) is left out
of what the model reads and listed in the response's ``input_transformations``, as OpenAI does for
reasoning it will not read (``reason: "organization_mismatch"``).
"""

from __future__ import annotations

import json
from collections.abc import Sequence

from responsa.protocol import Item, Reasoning

from ._sealing import Sealer

__all__ = ["ReasoningSeal"]

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
