"""Which URLs the server may reach for a tool (a tool definition or a search result must not become
a way into the network). For MCP ``server_url``s: hosts allowed by name with ``--mcp-allow-host``,
and loopback only while the server has no API keys (one trusted user on their own machine); for web
pages (``public``), any host whose addresses are all public, and loopback as for MCP. With API keys,
clients are not trusted: a loopback or private address is as closed as any other unless allowed by
name, or a tenant could probe the server's own ports (a database, say) through a tool. Link-local,
multicast, unspecified and cloud-metadata addresses are never reachable.

Host names are resolved and every address they resolve to is checked: when the request is
validated, and again by ``guard`` before every HTTP request the client sends (redirects
included), so a name that resolves differently later is judged again. An IPv6 address that carries
an IPv4 address (mapped, compatible, NAT64's well-known and local-use prefixes, 6to4, Teredo) is
judged by the address it carries: a route for such a prefix reaches that address, the metadata
service's included.
"""

from __future__ import annotations

import ipaddress
import socket
from collections.abc import Iterable
from typing import Any
from urllib.parse import urlsplit

import anyio

from responsa.protocol import InvalidRequest

__all__ = ["UrlPolicy"]

_METADATA_HOSTS = frozenset({"metadata.google.internal", "metadata", "instance-data", "metadata.azure.internal"})

Address = ipaddress.IPv4Address | ipaddress.IPv6Address


class UrlPolicy:
    """``check(url)`` raises a 400 naming ``param`` unless the URL is allowed."""

    def __init__(
        self, allowed_hosts: Iterable[str] = (), allow_loopback: bool = True, public: bool = False,
        subject: str = "MCP server_url", code: str = "mcp_url_not_allowed",
    ) -> None:  # fmt: skip
        self._allowed = {entry.lower() for entry in allowed_hosts}
        """``host`` (any port) or ``host:port`` entries."""
        self._allow_loopback = allow_loopback
        self._public = public
        """Hosts whose every address is public (globally routable) are reachable too."""
        self._subject = subject
        self._code = code

    def check(self, url: str | None, param: str) -> None:
        if not url:
            raise InvalidRequest(f"A {self._subject} is required.", param=param, code="missing_required_parameter")
        host, port = self._host_and_port(url, param)
        self._judge(url, param, host, port, _addresses(host))

    async def guard(self, request: Any) -> None:
        """An HTTP client's request hook: every request the MCP client sends is checked again."""
        url = str(request.url)
        host, port = self._host_and_port(url, "tools")
        try:
            infos = await anyio.getaddrinfo(host, port)
        except OSError:
            infos = []
        self._judge(url, "tools", host, port, [ipaddress.ip_address(info[4][0]) for info in infos])

    async def reachable(self, host: str, port: int) -> list[Address]:
        """The addresses of ``host`` a connection may go to, judged as a URL naming it is (a 400 saying
        why not): connect to these, not to the name again, so that it cannot resolve elsewhere."""
        try:
            found = [ipaddress.ip_address(host)]
        except ValueError:
            try:
                found = [ipaddress.ip_address(info[4][0]) for info in await anyio.getaddrinfo(host, port)]
            except OSError:
                found = []
        url = f"http://{host}:{port}/"
        self._judge(url, "network_policy", host.lower(), port, found)
        if not found:
            raise self._refused(url, "network_policy", "the host has no address")
        return found

    def _judge(self, url: str, param: str, host: str, port: int, found: list[Address]) -> None:
        addresses = [judged for address in found for judged in _judged_as(address)]
        if host in _METADATA_HOSTS:
            raise self._refused(url, param, "cloud metadata endpoints are never allowed")
        if any(address.is_link_local or address.is_multicast or address.is_unspecified for address in addresses):
            raise self._refused(url, param, "link-local, multicast and unspecified addresses are never allowed")
        if host in self._allowed or f"{host}:{port}" in self._allowed:
            return
        if self._allow_loopback and addresses and all(address.is_loopback for address in addresses):
            return
        if self._public and addresses and all(address.is_global for address in addresses):
            return
        if self._public:
            raise self._refused(url, param, "only public addresses (and loopback without API keys) are reachable")
        reachable = "loopback and hosts" if self._allow_loopback else "with API keys configured, hosts"
        raise self._refused(url, param, f"only {reachable} allowed with --mcp-allow-host are reachable")

    def _refused(self, url: str, param: str, why: str) -> InvalidRequest:
        message = f"{self._subject} {url!r} is not allowed: {why}."
        return InvalidRequest(message, param=param, code=self._code)

    def _host_and_port(self, url: str, param: str) -> tuple[str, int]:
        parts = urlsplit(url)
        host = (parts.hostname or "").lower()
        if parts.scheme not in ("http", "https") or not host:
            raise InvalidRequest(f"Invalid {self._subject} {url!r}: expected http(s)://host/...", param=param)
        try:
            port = parts.port or (443 if parts.scheme == "https" else 80)
        except ValueError:
            raise InvalidRequest(f"Invalid {self._subject} {url!r}: bad port.", param=param) from None
        return host, port


_COMPATIBLE = ipaddress.IPv6Network("::/96")
"""IPv4-compatible addresses (``::a.b.c.d``, deprecated; ``::`` and ``::1`` are IPv6's own)."""
_NAT64_WELL_KNOWN = ipaddress.IPv6Network("64:ff9b::/96")
_NAT64_LOCAL = ipaddress.IPv6Network("64:ff9b:1::/48")
"""RFC 8215's local-use prefix: any of RFC 6052's prefix lengths, so every place an IPv4 address may sit."""
_RFC6052_PREFIXES = (48, 56, 64, 96)
"""The prefix lengths a NAT64 local-use prefix may have (RFC 6052 section 2.2: 32 … 96, at least its 48)."""


def _judged_as(address: Address) -> list[Address]:
    """The addresses ``address`` is judged as: the IPv4 addresses it carries, if it carries any (for a
    NAT64 local-use address, every one it may carry), else itself."""
    if isinstance(address, ipaddress.IPv4Address):
        return [address]
    value = int(address)
    if address.ipv4_mapped is not None:
        return [address.ipv4_mapped]
    if (address in _COMPATIBLE and value > 1) or address in _NAT64_WELL_KNOWN:  # the last 32 bits
        return [ipaddress.IPv4Address(value & 0xFFFFFFFF)]
    if address in _NAT64_LOCAL:
        return [_rfc6052(value, length) for length in _RFC6052_PREFIXES]
    if address.sixtofour is not None:
        return [address.sixtofour]
    if address.teredo is not None:
        return list(address.teredo)  # the Teredo server and the client's own address
    return [address]


def _rfc6052(value: int, prefix_length: int) -> ipaddress.IPv4Address:
    """The IPv4 address behind a NAT64 prefix of ``prefix_length`` bits: the 32 bits after it, skipping
    the octet RFC 6052 reserves (bits 64-71)."""
    bits = f"{value:0128b}"
    without_reserved = bits[:64] + bits[72:]
    start = prefix_length if prefix_length <= 64 else prefix_length - 8
    return ipaddress.IPv4Address(int(without_reserved[start : start + 32], 2))


def _addresses(host: str) -> list[Address]:
    """The host's IP addresses: itself if it is one, else what it resolves to (empty if it does not)."""
    try:
        return [ipaddress.ip_address(host)]
    except ValueError:
        pass
    try:
        infos = socket.getaddrinfo(host, None)
    except OSError:
        return []
    return [ipaddress.ip_address(info[4][0]) for info in infos]
