"""The containers' egress proxy attacked directly on its Unix socket: only the allowed domains, and of
those only what the server's egress policy lets through (never link-local or cloud-metadata addresses,
loopback only without API keys); anything else a 403 before any connection is made."""

from __future__ import annotations

import asyncio
import tempfile
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from responsa.external import EgressProxy, UrlPolicy, allowed_domain
from tests.conftest import serve_app

pytestmark = pytest.mark.anyio


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


async def _page(scope: dict[str, Any], receive: Any, send: Any) -> None:
    if scope["type"] == "http":
        await send({"type": "http.response.start", "status": 200, "headers": []})
        await send({"type": "http.response.body", "body": b"the allowed page"})


async def _ask(path: Path, request: bytes) -> bytes:
    reader, writer = await asyncio.open_unix_connection(str(path))
    writer.write(request)
    await writer.drain()
    answer = await asyncio.wait_for(reader.read(), 10)
    writer.close()
    return answer


@pytest.fixture
async def site_port() -> AsyncIterator[int]:
    with serve_app(_page) as site:
        yield int(site.url.rsplit(":", 1)[1])


async def _proxy(domains: list[str], loopback: bool = True) -> EgressProxy:
    path = Path(tempfile.mkdtemp(prefix="egress-")) / "p.sock"
    proxy = EgressProxy(path, domains, UrlPolicy(allow_loopback=loopback, public=True, subject="container network"))
    await proxy.start()
    return proxy


async def test_an_allowed_host_is_forwarded_and_tunnelled(site_port: int) -> None:
    proxy = await _proxy(["localhost"])
    try:
        forwarded = await _ask(
            proxy.path, f"GET http://localhost:{site_port}/x HTTP/1.0\r\nHost: localhost\r\n\r\n".encode()
        )
        assert forwarded.startswith(b"HTTP/1.1 200") and b"the allowed page" in forwarded
        reader, writer = await asyncio.open_unix_connection(str(proxy.path))
        writer.write(f"CONNECT localhost:{site_port} HTTP/1.1\r\n\r\n".encode())
        assert (await reader.readuntil(b"\r\n\r\n")).startswith(b"HTTP/1.1 200 Connection established")
        writer.write(b"GET / HTTP/1.0\r\n\r\n")
        assert b"the allowed page" in await asyncio.wait_for(reader.read(), 10)
        writer.close()
    finally:
        await proxy.close()


@pytest.mark.parametrize(
    ("domains", "request_line", "why"),
    [
        (["localhost"], "CONNECT 127.0.0.1:{port} HTTP/1.1", b"not in the container's allowed_domains"),
        (["localhost"], "CONNECT evil-localhost:{port} HTTP/1.1", b"not in the container's allowed_domains"),
        (["localhost"], "GET http://[::ffff:169.254.169.254]/latest/meta-data/ HTTP/1.1", b"not in"),
        (["169.254.169.254"], "GET http://169.254.169.254/latest/meta-data/ HTTP/1.1", b"link-local"),
        (["metadata.google.internal"], "CONNECT metadata.google.internal:80 HTTP/1.1", b"metadata"),
        (["localhost"], "GET ftp://localhost/ HTTP/1.1", b"only http://"),
        (["localhost"], "garbage", b"not an HTTP proxy request"),
    ],
)
async def test_what_the_policy_refuses_is_a_403(
    site_port: int, domains: list[str], request_line: str, why: bytes
) -> None:
    proxy = await _proxy(domains)
    try:
        answer = await _ask(proxy.path, request_line.format(port=site_port).encode() + b"\r\n\r\n")
        assert answer.startswith(b"HTTP/1.1 403") and why in answer, answer
    finally:
        await proxy.close()


async def test_with_api_keys_loopback_is_closed_even_when_listed(site_port: int) -> None:
    proxy = await _proxy(["localhost"], loopback=False)
    try:
        answer = await _ask(proxy.path, f"CONNECT localhost:{site_port} HTTP/1.1\r\n\r\n".encode())
        assert answer.startswith(b"HTTP/1.1 403")
    finally:
        await proxy.close()


def test_a_domain_allows_itself_and_what_is_below_it() -> None:
    assert allowed_domain("api.example.com", ["example.com"]) and allowed_domain("EXAMPLE.com.", ["example.com"])
    assert not allowed_domain("badexample.com", ["example.com"]) and not allowed_domain(
        "example.com.evil", ["example.com"]
    )
