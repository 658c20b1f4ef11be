"""A sampled token's log probability and its most likely alternatives, from llama.cpp's logits (the
model's own distribution, before sampling's truncations), in the OpenAI ``logprobs`` shape."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

__all__ = ["logprob_entry"]


def logprob_entry(logits: Any, n_vocab: int, token: int, top: int, piece: Callable[[int], bytes]) -> dict[str, Any]:
    """``token``'s entry; ``logits`` points at its row of ``n_vocab`` floats, ``piece`` gives a token's bytes."""
    import numpy as np  # here: a server without the embedded model does not carry it

    row = np.ctypeslib.as_array(logits, shape=(n_vocab,)).astype(np.float64)
    shifted = row - row.max()
    logprobs = shifted - np.log(np.exp(shifted).sum())
    best = np.argpartition(-logprobs, top)[:top] if 0 < top < n_vocab else np.arange(0)
    ranked = sorted(best.tolist(), key=lambda candidate: -logprobs[candidate])
    return {**_entry(token, float(logprobs[token]), piece),
            "top_logprobs": [_entry(candidate, float(logprobs[candidate]), piece) for candidate in ranked]}  # fmt: skip


def _entry(token: int, logprob: float, piece: Callable[[int], bytes]) -> dict[str, Any]:
    raw = piece(token)
    return {"token": raw.decode("utf-8", errors="replace"), "logprob": round(logprob, 6), "bytes": list(raw)}
