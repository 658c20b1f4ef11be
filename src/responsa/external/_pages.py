"""Fetching web pages for the model, safely: every URL (and every redirect) passes the egress policy
(no ``file:``, no link-local or metadata address, private and loopback ones only as the policy allows),
a page is read up to a size cap within a deadline, and only HTML and text are read. The text is
extracted with trafilatura (the page's main content, without menus and boilerplate)."""

from __future__ import annotations

import logging
from dataclasses import dataclass

import anyio

from responsa.protocol import InvalidRequest, failure_of, probe_in_child

from ._mcp_policy import UrlPolicy

__all__ = ["Page", "PageFetcher", "probe_page_extraction"]

logger = logging.getLogger(__name__)

_READABLE = ("text/html", "application/xhtml+xml", "text/plain")

_EXTRACTION_PROBE = """
import trafilatura
page = "<html><head><title>t</title></head><body><article><p>" + "A page the server reads. " * 20 + "</p></article>"
assert trafilatura.bare_extraction(page + "</body></html>", with_metadata=True) is not None, "no text extracted"
"""


def probe_page_extraction() -> str | None:
    """None when trafilatura extracts a page's text here; otherwise its error (a missing or broken
    package, such as jusText's import of ``lxml.html.clean`` without ``lxml_html_clean``)."""
    return probe_in_child(_EXTRACTION_PROBE)


@dataclass(frozen=True)
class Page:
    url: str
    title: str
    text: str


class PageFetcher:
    """Reads pages within ``timeout`` seconds and ``max_bytes`` each; a page that cannot be read is None."""

    def __init__(self, policy: UrlPolicy, timeout: float = 10.0, max_bytes: int = 2 * 1024 * 1024) -> None:
        self.policy = policy
        self._timeout = timeout
        self._max_bytes = max_bytes

    async def fetch(self, url: str) -> Page | None:
        """The page's title and main text, or None (refused, unreachable, too slow, not text). The policy
        judges the first request as it does every redirect (the client's request hook, resolving names
        without blocking); a URL that is not http(s) is refused by the client before any connection."""
        body = b""
        with anyio.move_on_after(self._timeout):
            body, kind = await self._read(url)
        if not body:
            return None
        try:
            return await anyio.to_thread.run_sync(_extract, url, body, kind)
        except Exception as failure:  # a page trafilatura cannot take: the search goes on without it
            logger.warning("the text of %s could not be extracted: %s", url, failure_of(failure))
            return None

    async def _read(self, url: str) -> tuple[bytes, str]:
        import httpx  # here, not at the top: a server that never fetches a page does not carry it

        hooks = {"request": [self.policy.guard], "response": []}
        limits = httpx.Timeout(self._timeout)
        try:
            async with httpx.AsyncClient(follow_redirects=True, max_redirects=5, timeout=limits, event_hooks=hooks,
                                         headers={"User-Agent": "responsa web_search"}) as client:  # fmt: skip
                async with client.stream("GET", url) as reply:
                    kind = reply.headers.get("content-type", "").split(";")[0].strip().lower()
                    if reply.status_code != 200 or kind not in _READABLE:
                        return b"", kind
                    chunks, size = [], 0
                    async for chunk in reply.aiter_bytes():
                        chunks.append(chunk)
                        size += len(chunk)
                        if size >= self._max_bytes:
                            break
                    return b"".join(chunks)[: self._max_bytes], kind
        except (httpx.HTTPError, InvalidRequest, OSError):
            return b"", ""


def _extract(url: str, body: bytes, kind: str) -> Page | None:
    """The page's title and main text (trafilatura for HTML)."""
    text = body.decode("utf-8", errors="replace")
    if kind == "text/plain":
        return Page(url, url, text.strip()) if text.strip() else None
    import trafilatura

    document = trafilatura.bare_extraction(text, url=url, include_comments=False, with_metadata=True)
    if document is None:
        return None
    main = (getattr(document, "text", None) or "").strip()
    title = (getattr(document, "title", None) or url).strip()
    return Page(url, title, main) if main else None
