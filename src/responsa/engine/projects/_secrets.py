"""API key secrets: made here, shown once, kept as their SHA-256 (a secret is 32 random bytes, so a
fast hash is enough: there is nothing to guess from it) and shown afterwards redacted."""

from __future__ import annotations

import hashlib
import secrets

__all__ = ["ADMIN_PREFIX", "PROJECT_PREFIX", "new_secret", "redacted", "secret_hash"]

PROJECT_PREFIX = "sk-proj-"
ADMIN_PREFIX = "sk-admin-"


def new_secret(prefix: str) -> str:
    """A new key's secret, as OpenAI's look (``sk-proj-…``, ``sk-admin-…``)."""
    return prefix + secrets.token_urlsafe(32)


def secret_hash(secret: bytes | str) -> str:
    """What the store keeps of a secret, and what a bearer token is looked up by."""
    return hashlib.sha256(secret.encode() if isinstance(secret, str) else secret).hexdigest()


def redacted(secret: str) -> str:
    """The secret as listings show it: its prefix and its last four characters."""
    prefix = next((prefix for prefix in (ADMIN_PREFIX, PROJECT_PREFIX) if secret.startswith(prefix)), "")
    return f"{prefix}****{secret[-4:]}" if len(secret) > len(prefix) + 8 else "****"
