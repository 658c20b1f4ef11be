"""Web search providers (``--web-search PROVIDER[:URL]``): a SearXNG instance's JSON API, Brave's and
Tavily's search APIs (keys from ``BRAVE_API_KEY``, ``TAVILY_API_KEY``), and ``ddgs`` (no key, no
service: it scrapes public search engines). Each answers a query with hits (url, title, snippet); the
pages themselves are fetched by :class:`~responsa.external.PageFetcher`."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Protocol

import anyio

from responsa.protocol import failure_of, probe_in_child

from ._pages import PageFetcher

__all__ = ["SearchHit", "SearchProvider", "WebSearch", "make_provider"]

_TIMEOUT = 10.0


@dataclass(frozen=True)
class SearchHit:
    url: str
    title: str
    snippet: str


class SearchProvider(Protocol):
    """A search engine: ``count`` hits for ``query`` at most, best first."""

    @property
    def name(self) -> str: ...

    async def search(self, query: str, count: int, country: str | None = None) -> list[SearchHit]: ...

    async def check(self) -> str | None:
        """None when the provider can be used, as far as the server can tell at start; otherwise why not."""


def _hits(rows: Any, url: str, title: str, snippet: str) -> list[SearchHit]:
    """Hits from a provider's list of result objects, skipping malformed ones."""
    found = []
    for row in rows if isinstance(rows, list) else []:
        if isinstance(row, Mapping) and isinstance(row.get(url), str) and row[url].startswith(("http://", "https://")):
            found.append(SearchHit(row[url], str(row.get(title) or row[url]), str(row.get(snippet) or "")))
    return found


async def _get_json(method: str, url: str, **request: Any) -> Any:
    """The JSON a provider answers. httpx is imported here: a server without web search (most of
    them) does not carry it, and what it pulls in, in memory."""
    import httpx

    async with httpx.AsyncClient(timeout=_TIMEOUT) as client:
        reply = await client.request(method, url, **request)
        reply.raise_for_status()
        return reply.json()


@dataclass(frozen=True)
class SearxngSearch:
    """A SearXNG instance (``GET URL/search?q=...&format=json``; JSON must be enabled in its settings)."""

    url: str
    name: str = "searxng"

    async def search(self, query: str, count: int, country: str | None = None) -> list[SearchHit]:
        params = {"q": query, "format": "json"}
        data = await _get_json("GET", f"{self.url.rstrip('/')}/search", params=params)
        return _hits(data.get("results") if isinstance(data, dict) else None, "url", "title", "content")[:count]

    async def check(self) -> str | None:
        """One search: the instance answers, with JSON (its settings must enable the format)."""
        try:
            await self.search("responsa", 1)
        except Exception as failure:
            return f"{self.url} did not answer a search: {failure_of(failure)}"
        return None


@dataclass(frozen=True)
class BraveSearch:
    """Brave's Search API (``X-Subscription-Token``)."""

    key: str
    url: str = "https://api.search.brave.com"
    name: str = "brave"

    async def search(self, query: str, count: int, country: str | None = None) -> list[SearchHit]:
        params: dict[str, Any] = {"q": query, "count": min(count, 20)}
        if country:
            params["country"] = country.lower()
        headers = {"X-Subscription-Token": self.key, "Accept": "application/json"}
        data = await _get_json("GET", f"{self.url.rstrip('/')}/res/v1/web/search", params=params, headers=headers)
        web = data.get("web") if isinstance(data, dict) else None
        return _hits(web.get("results") if isinstance(web, dict) else None, "url", "title", "description")[:count]

    async def check(self) -> str | None:
        """The key is given (make_provider checked): a search at start would spend the quota."""
        return None


@dataclass(frozen=True)
class TavilySearch:
    """Tavily's search API (``Authorization: Bearer``)."""

    key: str
    url: str = "https://api.tavily.com"
    name: str = "tavily"

    async def search(self, query: str, count: int, country: str | None = None) -> list[SearchHit]:
        body = {"query": query, "max_results": min(count, 20), "search_depth": "basic"}
        headers = {"Authorization": f"Bearer {self.key}"}
        data = await _get_json("POST", f"{self.url.rstrip('/')}/search", json=body, headers=headers)
        return _hits(data.get("results") if isinstance(data, dict) else None, "url", "title", "content")[:count]

    async def check(self) -> str | None:
        """The key is given (make_provider checked): a search at start would spend the quota."""
        return None


@dataclass(frozen=True)
class DdgsSearch:
    """The ``ddgs`` library: no key, no service (it scrapes public engines, so expect rate limits)."""

    name: str = "ddgs"

    async def search(self, query: str, count: int, country: str | None = None) -> list[SearchHit]:
        from ddgs import DDGS

        region = f"{country.lower()}-en" if country else "wt-wt"
        rows = await anyio.to_thread.run_sync(lambda: DDGS().text(query, region=region, max_results=count))
        return _hits(rows, "href", "title", "body")[:count]

    async def check(self) -> str | None:
        return await anyio.to_thread.run_sync(probe_in_child, "import ddgs")


@dataclass(frozen=True)
class WebSearch:
    """What the server searches the web with: the provider, and the fetcher of the pages it finds."""

    provider: SearchProvider
    pages: PageFetcher


def make_provider(spec: str, keys: Mapping[str, str | None]) -> SearchProvider:
    """The provider ``--web-search`` names (``searxng:URL``, ``brave[:URL]``, ``tavily[:URL]``,
    ``ddgs``); ``ValueError`` saying what is missing otherwise."""
    name, _, url = spec.partition(":")
    name = name.strip().lower()
    if name == "searxng":
        if not url.startswith(("http://", "https://")):
            raise ValueError("--web-search searxng needs the instance's URL: searxng:https://host")
        return SearxngSearch(url)
    if name in ("brave", "tavily"):
        key = keys.get(name)
        if not key:
            raise ValueError(f"--web-search {name} needs a key: set {name.upper()}_API_KEY")
        provider = BraveSearch if name == "brave" else TavilySearch
        return provider(key, url) if url else provider(key)
    if name == "ddgs":
        return DdgsSearch()
    raise ValueError(f"--web-search {spec!r}: expected searxng:URL, brave, tavily or ddgs")
