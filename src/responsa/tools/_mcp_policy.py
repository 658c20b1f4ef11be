"""Which MCP ``server_url``s the server may connect to: loopback and configured hosts, never
link-local or cloud-metadata addresses (a tool definition must not become a way into the network)."""

from __future__ import annotations

import ipaddress
import socket
from collections.abc import Iterable
from urllib.parse import urlsplit

from responsa.protocol import InvalidRequest

__all__ = ["UrlPolicy"]

_METADATA_HOSTS = frozenset({"metadata.google.internal", "metadata", "instance-data", "metadata.azure.internal"})


class UrlPolicy:
    """``check(url)`` raises a 400 naming ``param`` unless the URL is allowed."""

    def __init__(self, allowed_hosts: Iterable[str] = ()) -> None:
        self._allowed = {host.lower() for host in allowed_hosts}

    def check(self, url: str | None, param: str) -> None:
        if not url:
            raise InvalidRequest("An MCP tool needs a 'server_url'.", param=param, code="missing_required_parameter")
        parts = urlsplit(url)
        host = (parts.hostname or "").lower()
        if parts.scheme not in ("http", "https") or not host:
            raise InvalidRequest(f"Invalid MCP server_url {url!r}: expected http(s)://host/...", param=param)
        if host in _METADATA_HOSTS:
            raise self._refused(url, param, "cloud metadata endpoints are never allowed")
        addresses = _addresses(host)
        if any(address.is_link_local or address.is_multicast or address.is_unspecified for address in addresses):
            raise self._refused(url, param, "link-local, multicast and unspecified addresses are never allowed")
        if host in self._allowed or (addresses and all(address.is_loopback for address in addresses)):
            return
        raise self._refused(url, param, "only loopback and hosts allowed with --mcp-allow-host are reachable")

    @staticmethod
    def _refused(url: str, param: str, why: str) -> InvalidRequest:
        return InvalidRequest(f"MCP server_url {url!r} is not allowed: {why}.", param=param, code="mcp_url_not_allowed")


def _addresses(host: str) -> list[ipaddress.IPv4Address | ipaddress.IPv6Address]:
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
