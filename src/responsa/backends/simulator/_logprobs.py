"""Log probabilities the simulator invents for its tokens: consistent as a real model's are (each at
most 0, the chosen token first among ``top_logprobs``, the alternatives' probabilities summing to
less than one), and reproducible from the request's seed."""

from __future__ import annotations

import math
import random
from typing import Any

__all__ = ["invent_logprobs"]

_ALTERNATIVES = (" the", " a", ",", ".", " and", " of", " to", " is", " in", " it", " that", " for", " on",
                 " with", " as", " this", " be", " at", " by", " or", " an")  # fmt: skip


def _entry(token: str, logprob: float) -> dict[str, Any]:
    return {"token": token, "logprob": round(logprob, 6), "bytes": list(token.encode())}


def invent_logprobs(token: str, top: int, rng: random.Random) -> dict[str, Any]:
    """One token's entry (``token``, ``logprob``, ``bytes``, ``top_logprobs`` with ``top`` alternatives)."""
    chosen = 0.5 + 0.5 * rng.random()
    entry = _entry(token, math.log(chosen))
    left = 1.0 - chosen
    alternatives = [_entry(token, math.log(chosen))] if top else []
    for candidate in rng.sample([alt for alt in _ALTERNATIVES if alt != token], k=max(top - 1, 0)):
        left /= 2
        alternatives.append(_entry(candidate, math.log(left) if left > 0 else -9999.0))
    return {**entry, "top_logprobs": alternatives}
