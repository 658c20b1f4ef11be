"""Opaque, tamper-proof tokens for what the server hands a client to send back later (compaction items).

AES-GCM with the server's key; the tenant is the associated data, so one tenant's token does not
open for another. Replicas that share the key (``--secret-key``) open each other's tokens.
"""

from __future__ import annotations

import base64
import os
import zlib
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from cryptography.hazmat.primitives.ciphers.aead import AESGCM

__all__ = ["Sealer"]

_PREFIX = "rsa1."
"""Marks the format, so a later one can be told apart."""
_NONCE = 12


class Sealer:
    """Seals text into an opaque token and opens it again; ``key`` is 32 bytes.

    ``cryptography`` (9 MB resident) is loaded on first use: most servers never compact."""

    def __init__(self, key: bytes) -> None:
        self._key = key
        self._cipher: AESGCM | None = None

    def _aead(self) -> AESGCM:
        if self._cipher is None:
            from cryptography.hazmat.primitives.ciphers.aead import AESGCM

            self._cipher = AESGCM(self._key)
        return self._cipher

    def seal(self, text: str, tenant: str) -> str:
        nonce = os.urandom(_NONCE)
        sealed = self._aead().encrypt(nonce, zlib.compress(text.encode()), tenant.encode())
        return _PREFIX + base64.urlsafe_b64encode(nonce + sealed).decode()

    def open(self, token: str, tenant: str) -> str | None:
        """The text sealed in ``token``; None when it was not sealed by this key for this tenant."""
        if not token.startswith(_PREFIX):
            return None
        from cryptography.exceptions import InvalidTag

        try:
            raw = base64.urlsafe_b64decode(token[len(_PREFIX) :])
            plain = self._aead().decrypt(raw[:_NONCE], raw[_NONCE:], tenant.encode())
            return zlib.decompress(plain).decode()
        except (ValueError, InvalidTag, zlib.error):
            return None
