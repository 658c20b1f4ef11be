"""Moderation verdicts in OpenAI's categories, whichever model gave them: OpenAI's own moderation
models (scores per category), a guard model such as Llama Guard (a list of violated hazard codes,
mapped onto OpenAI's categories) or the simulator's word lists."""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

__all__ = ["CATEGORIES", "GUARD_CATEGORIES", "ModerationVerdict", "from_guard_answer", "from_openai_result"]

CATEGORIES = (
    "harassment", "harassment/threatening", "hate", "hate/threatening", "illicit", "illicit/violent",
    "self-harm", "self-harm/instructions", "self-harm/intent", "sexual", "sexual/minors", "violence",
    "violence/graphic",
)  # fmt: skip
"""OpenAI's moderation categories (``types/moderation.py``), each reported for every verdict."""

GUARD_CATEGORIES: Mapping[str, tuple[str, ...]] = {
    "S1": ("violence", "illicit/violent"),  # violent crimes
    "S2": ("illicit",),  # non-violent crimes
    "S3": ("sexual",),  # sex-related crimes
    "S4": ("sexual/minors",),  # child sexual exploitation
    "S5": ("harassment",),  # defamation
    "S6": ("illicit",),  # specialized advice
    "S7": ("illicit",),  # privacy
    "S8": ("illicit",),  # intellectual property
    "S9": ("illicit/violent", "violence"),  # indiscriminate weapons
    "S10": ("hate",),
    "S11": ("self-harm", "self-harm/intent"),
    "S12": ("sexual",),
    "S13": ("illicit",),  # elections
    "S14": ("illicit",),  # code interpreter abuse
}
"""Llama Guard 3's hazard codes onto OpenAI's categories (docs/moderation.md has the table)."""


@dataclass(frozen=True)
class ModerationVerdict:
    """One text's moderation: each category flagged or not, with its score."""

    scores: Mapping[str, float]
    flags: Mapping[str, bool] = field(default_factory=dict)

    @property
    def flagged(self) -> bool:
        return any(self.flags.values())

    def categories(self) -> dict[str, bool]:
        return {name: bool(self.flags.get(name)) for name in CATEGORIES}

    def category_scores(self) -> dict[str, float]:
        return {name: float(self.scores.get(name, 0.0)) for name in CATEGORIES}

    def applied_input_types(self) -> dict[str, list[str]]:
        """Text for every category (the inputs read here are text)."""
        return {name: ["text"] for name in CATEGORIES}

    @staticmethod
    def of_flags(flagged: Iterable[str]) -> ModerationVerdict:
        """A verdict that flags ``flagged`` with score 1 and clears the rest (a guard model's: no scores)."""
        names = set(flagged)
        return ModerationVerdict({name: 1.0 if name in names else 0.0 for name in CATEGORIES},
                                 {name: name in names for name in CATEGORIES})  # fmt: skip


def from_openai_result(result: Mapping[str, Any]) -> ModerationVerdict:
    """One entry of ``results`` of an OpenAI-shaped ``POST /v1/moderations`` answer."""
    categories, scores = result.get("categories") or {}, result.get("category_scores") or {}
    return ModerationVerdict({name: float(scores.get(name) or 0.0) for name in CATEGORIES},
                             {name: bool(categories.get(name)) for name in CATEGORIES})  # fmt: skip


_CODES = re.compile(r"\bS\d{1,2}\b")


def from_guard_answer(answer: str) -> ModerationVerdict:
    """A guard model's answer: ``safe``, or ``unsafe`` and the violated codes (``unsafe\\nS1,S10``).
    Anything else is not a verdict: a ValueError."""
    words = answer.strip().lower().split()
    if not words or words[0] not in ("safe", "unsafe"):
        raise ValueError(f"not a guard verdict: {answer[:80]!r}")
    if words[0] == "safe":
        return ModerationVerdict.of_flags(())
    codes = _CODES.findall(answer.upper()) or ["S2"]  # unsafe without a code: an unnamed crime
    return ModerationVerdict.of_flags(name for code in codes for name in GUARD_CATEGORIES.get(code, ("illicit",)))
