"""The simulator's moderation model, ``sim-moderation``: a deterministic word-list classifier, so that
moderated responses (scores, blocked input, withheld output) can be built and tested without a guard
model. Each category has a few marker words (docs/simulator.md lists them); a category scores 0.6 for
one marker found, 0.9 for two or more, and is flagged from 0.5."""

from __future__ import annotations

import re
from collections.abc import Mapping

from responsa.backends._moderation import ModerationVerdict

__all__ = ["MARKERS", "MODERATION_MODEL", "classify"]

MODERATION_MODEL = "sim-moderation"

MARKERS: Mapping[str, frozenset[str]] = {
    "harassment": frozenset(("idiot", "loser", "pathetic")),
    "harassment/threatening": frozenset(("i will hurt you", "watch your back")),
    "hate": frozenset(("subhuman", "vermin")),
    "illicit": frozenset(("counterfeit", "launder", "shoplift")),
    "illicit/violent": frozenset(("pipe bomb", "untraceable gun")),
    "self-harm": frozenset(("hurt myself", "self-harm")),
    "self-harm/intent": frozenset(("end my life", "kill myself")),
    "violence": frozenset(("kill", "murder", "stab")),
    "violence/graphic": frozenset(("gore", "dismember")),
}

_FLAG_AT = 0.5


def classify(text: str) -> ModerationVerdict:
    """The verdict on ``text``: its categories' marker words, counted."""
    lowered = text.lower()
    scores: dict[str, float] = {}
    for category, markers in MARKERS.items():
        found = sum(1 for marker in markers if re.search(rf"\b{re.escape(marker)}\b", lowered))
        scores[category] = 0.0 if found == 0 else 0.6 if found == 1 else 0.9
    return ModerationVerdict(scores, {category: score >= _FLAG_AT for category, score in scores.items()})
