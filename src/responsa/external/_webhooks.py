"""Webhook deliveries to the outside: signed as Standard Webhooks (what the openai SDK's
``client.webhooks.unwrap`` verifies), sent through the egress policy with a deadline, never
following a redirect, reading at most a little of the answer. A receiver is hostile: it may be slow,
answer forever or point at the server's own network, and none of it stalls anything else."""

from __future__ import annotations

import base64
import hashlib
import hmac
import secrets
import time
from dataclasses import dataclass

import anyio

from responsa.protocol import InvalidRequest

from ._mcp_policy import UrlPolicy

__all__ = ["Attempt", "WebhookSender", "new_secret", "signature"]

_MAX_ANSWER_BYTES = 4096
"""What is kept of a receiver's answer (for the delivery log); the rest is not read."""


def new_secret() -> str:
    """A ``whsec_`` secret: 32 random bytes, base64."""
    return "whsec_" + base64.b64encode(secrets.token_bytes(32)).decode()


def _key(secret: str) -> bytes:
    return base64.b64decode(secret.removeprefix("whsec_")) if secret.startswith("whsec_") else secret.encode()


def signature(secrets_: tuple[str, ...], message_id: str, timestamp: int, body: str) -> str:
    """The ``webhook-signature`` header: ``v1,<base64 HMAC-SHA256>`` of ``{id}.{timestamp}.{body}`` by each
    secret, space-separated (two while a rotated secret's last day lasts)."""
    signed = f"{message_id}.{timestamp}.{body}".encode()
    return " ".join(
        "v1," + base64.b64encode(hmac.new(_key(secret), signed, hashlib.sha256).digest()).decode()
        for secret in secrets_
    )


@dataclass(frozen=True)
class Attempt:
    """How one delivery attempt went: delivered on a 2xx; otherwise the status or the error."""

    delivered: bool
    status_code: int | None
    error: str | None


class WebhookSender:
    def __init__(self, policy: UrlPolicy, timeout: float) -> None:
        self.policy = policy
        self.timeout = timeout

    def check(self, url: str, param: str) -> None:
        """A 400 naming ``param`` unless the policy lets deliveries reach ``url``."""
        self.policy.check(url, param)

    async def send(self, url: str, body: str, message_id: str, secrets_: tuple[str, ...]) -> Attempt:
        """POST ``body`` signed to ``url`` once, within the deadline (connect, send, answer)."""
        import httpx  # here: a server without webhooks does not carry it

        timestamp = int(time.time())
        headers = {
            "content-type": "application/json",
            "user-agent": "responsa-webhooks",
            "webhook-id": message_id,
            "webhook-timestamp": str(timestamp),
            "webhook-signature": signature(secrets_, message_id, timestamp, body),
        }
        hooks = {"request": [self.policy.guard], "response": []}
        with anyio.move_on_after(self.timeout):
            try:
                async with httpx.AsyncClient(
                    follow_redirects=False, timeout=self.timeout, event_hooks=hooks, trust_env=False
                ) as client:
                    async with client.stream("POST", url, content=body.encode(), headers=headers) as answer:
                        read = 0
                        async for chunk in answer.aiter_raw():
                            read += len(chunk)
                            if read >= _MAX_ANSWER_BYTES:
                                break
                        code = answer.status_code
                        delivered = 200 <= code < 300
                        return Attempt(delivered, code, None if delivered else f"the receiver answered {code}")
            except InvalidRequest as refused:
                return Attempt(False, None, refused.message)
            except (httpx.HTTPError, OSError) as failure:
                return Attempt(False, None, f"{type(failure).__name__}: {failure}"[:500])
        return Attempt(False, None, f"no answer within {self.timeout:g}s")
