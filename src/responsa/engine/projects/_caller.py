"""Whose key the request's task came with."""

from __future__ import annotations

from contextvars import ContextVar

__all__ = ["CALLER_KEY"]

CALLER_KEY: ContextVar[str | None] = ContextVar("responsa_caller_key", default=None)
"""The id of the stored key the request's task came with (set as the gate resolves it; None for the
settings' keys and a server without keys): the usage ledger and the audit log name it."""
