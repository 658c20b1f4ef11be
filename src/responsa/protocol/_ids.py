"""Object ids with the OpenAI prefixes (``resp_``, ``msg_``, ``fc_``, ``rs_``, ``call_``)."""

from __future__ import annotations

import secrets

__all__ = ["new_id"]


def new_id(prefix: str) -> str:
    """A fresh, unguessable id such as ``resp_3f9c…`` (24 random bytes, hex)."""
    return f"{prefix}_{secrets.token_hex(24)}"
