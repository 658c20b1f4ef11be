"""A container's only way out, for a network policy ``allowlist``: an HTTP proxy on a Unix socket that
the sandbox sees (its own network namespace has loopback alone; the driver relays 127.0.0.1:3128 to
the socket, and the sandbox's ``HTTP(S)_PROXY`` names it).

Each connection asks for one host: ``CONNECT host:port`` (HTTPS, tunnelled as bytes) or a plain
``GET http://host/...`` (forwarded as an origin-form request). The host must be one of the allowed
domains or below one, and pass the server's egress policy (``UrlPolicy``: public addresses only,
loopback while the server has no API keys, never link-local or cloud-metadata addresses in any
spelling); the proxy connects to the address it judged, never to the name again. Anything else is a
``403`` with the reason. Limits: time to connect, idle time, and bytes each way."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

from responsa.protocol import InvalidRequest

from ._mcp_policy import UrlPolicy

__all__ = ["EgressLimits", "EgressProxy", "allowed_domain"]

logger = logging.getLogger(__name__)

_HEAD_BYTES = 16 * 1024


@dataclass(frozen=True)
class EgressLimits:
    connect_seconds: float = 10.0
    idle_seconds: float = 60.0
    bytes_each_way: int = 256 * 1024 * 1024


def allowed_domain(host: str, domains: Sequence[str]) -> bool:
    """Whether ``host`` is one of ``domains`` or a subdomain of one (``api.example.com`` under ``example.com``)."""
    host = host.lower().rstrip(".")
    return any(host == domain or host.endswith("." + domain) for domain in (d.lower().strip(".") for d in domains))


class _Refused(Exception):
    pass


class EgressProxy:
    """One container's proxy: serving on ``path`` from :meth:`start` to :meth:`close`."""

    def __init__(
        self, path: Path, domains: Sequence[str], policy: UrlPolicy, limits: EgressLimits | None = None
    ) -> None:
        self.path = path
        self._domains = list(domains)
        self._policy = policy
        self._limits = limits or EgressLimits()
        self._server: asyncio.Server | None = None

    async def start(self) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with contextlib.suppress(FileNotFoundError):
            self.path.unlink()
        self._server = await asyncio.start_unix_server(self._serve, path=str(self.path), limit=_HEAD_BYTES)

    async def close(self) -> None:
        server, self._server = self._server, None
        if server is not None:
            server.close()
        with contextlib.suppress(FileNotFoundError):
            self.path.unlink()

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            async with asyncio.timeout(self._limits.connect_seconds):
                head = await reader.readuntil(b"\r\n\r\n")
                tunnel, host, port, forwarded = _target(head)
                address = await self._judged(host, port)
                upstream_reader, upstream_writer = await asyncio.open_connection(str(address), port)
        except _Refused as refused:
            await _answer(writer, 403, str(refused))
            return
        except (TimeoutError, OSError, asyncio.IncompleteReadError, asyncio.LimitOverrunError) as exc:
            await _answer(writer, 502, f"no connection: {exc!r}")
            return
        if tunnel:
            writer.write(b"HTTP/1.1 200 Connection established\r\n\r\n")
        else:
            upstream_writer.write(forwarded)
        await asyncio.gather(self._pipe(reader, upstream_writer), self._pipe(upstream_reader, writer))

    async def _judged(self, host: str, port: int) -> str:
        if not allowed_domain(host, self._domains):
            raise _Refused(f"{host} is not in the container's allowed_domains")
        try:
            addresses = await self._policy.reachable(host, port)
        except InvalidRequest as refused:
            raise _Refused(refused.message) from None
        return str(addresses[0])

    async def _pipe(self, source: asyncio.StreamReader, sink: asyncio.StreamWriter) -> None:
        sent = 0
        try:
            while sent <= self._limits.bytes_each_way:
                async with asyncio.timeout(self._limits.idle_seconds):
                    piece = await source.read(1 << 16)
                if not piece:
                    break
                sent += len(piece)
                sink.write(piece)
                await sink.drain()
        except (TimeoutError, OSError):
            pass
        finally:
            sink.close()


def _target(head: bytes) -> tuple[bool, str, int, bytes]:
    """What a request asks for: tunnelled (CONNECT) or forwarded, the host and port, and the request as
    the host is to receive it (origin-form)."""
    line, _, rest = head.partition(b"\r\n")
    try:
        method, target, version = line.decode("latin-1").split(" ")
    except ValueError:
        raise _Refused("not an HTTP proxy request") from None
    if method == "CONNECT":
        host, _, port = target.rpartition(":")
        if not host or not port.isdigit():
            raise _Refused("CONNECT needs host:port")
        return True, host.strip("[]"), int(port), b""
    parts = urlsplit(target)
    if parts.scheme != "http" or not parts.hostname:
        raise _Refused("only http:// URLs are forwarded (HTTPS goes through CONNECT)")
    path = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
    forwarded = f"{method} {path} {version}\r\n".encode("latin-1") + rest
    return False, parts.hostname, parts.port or 80, forwarded


async def _answer(writer: asyncio.StreamWriter, status: int, why: str) -> None:
    reason = {403: "Forbidden", 502: "Bad Gateway"}[status]
    body = f"responsa: {why}\n".encode()
    writer.write(
        f"HTTP/1.1 {status} {reason}\r\ncontent-length: {len(body)}\r\nconnection: close\r\n\r\n".encode() + body
    )
    with contextlib.suppress(OSError):
        await writer.drain()
    writer.close()
