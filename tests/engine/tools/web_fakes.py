"""Loopback stand-ins for the web: SearXNG's, Brave's and Tavily's search APIs answering from a fixed
index, and the pages they point to (plus hostile ones: slow, huge, redirecting to a metadata address)."""

from __future__ import annotations

import json
from typing import Any

import anyio
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, PlainTextResponse, RedirectResponse, Response
from starlette.routing import Route

__all__ = ["FakeWeb"]

PAGES = {
    "comets": ("Comets explained", "Comets are icy bodies that grow a glowing coma and tail near the Sun."),
    "tides": ("Why tides happen", "The Moon's gravity pulls the oceans, raising two bulges that make tides."),
}

_HTML = """<!doctype html><html><head><title>{title}</title></head><body>
<nav><a href="/">Home</a> | <a href="/about">About</a></nav>
<article><h1>{title}</h1><p>{text}</p><p>{filler}</p></article>
<footer>Copyright the fake web</footer></body></html>"""
_FILLER = "This paragraph is here so that the page has enough text to count as an article for extraction. " * 3


class FakeWeb:
    """One loopback server: the search APIs at their paths, and the pages under ``/pages/``."""

    def __init__(self) -> None:
        self.base = ""
        """``http://127.0.0.1:PORT`` once served (set by the test)."""
        self.fetched: list[str] = []
        """Paths of the pages requested."""
        self.searches: list[dict[str, Any]] = []
        """Each search request: provider, query, headers."""
        self.extra_hits: list[dict[str, str]] = []
        """Hits every search returns after the indexed ones (hostile URLs, other hosts)."""
        self.app = Starlette(
            routes=[
                Route("/search", self._searxng, methods=["GET"]),
                Route("/search", self._tavily, methods=["POST"]),
                Route("/res/v1/web/search", self._brave, methods=["GET"]),
                Route("/pages/{name}", self._page, methods=["GET"]),
            ]
        )

    def _hits(self, query: str) -> list[dict[str, str]]:
        words = set(query.lower().split())
        hits = [{"url": f"{self.base}/pages/{name}", "title": title, "snippet": text[:40]}
                for name, (title, text) in PAGES.items() if name in words or name.rstrip("s") in words]  # fmt: skip
        return hits + self.extra_hits

    async def _searxng(self, request: Request) -> Response:
        if request.query_params.get("format") != "json":
            return PlainTextResponse("json only", status_code=403)
        query = request.query_params.get("q", "")
        self.searches.append({"provider": "searxng", "query": query})
        results = [{"url": hit["url"], "title": hit["title"], "content": hit["snippet"], "engine": "fake"}
                   for hit in self._hits(query)]  # fmt: skip
        return JSONResponse({"query": query, "number_of_results": len(results), "results": results})

    async def _brave(self, request: Request) -> Response:
        token = request.headers.get("x-subscription-token")
        if token != "brave-key":
            return JSONResponse({"error": "unauthorized"}, status_code=401)
        query = request.query_params.get("q", "")
        self.searches.append({"provider": "brave", "query": query, "country": request.query_params.get("country")})
        results = [
            {"url": hit["url"], "title": hit["title"], "description": hit["snippet"]} for hit in self._hits(query)
        ]
        return JSONResponse({"type": "search", "web": {"results": results}})

    async def _tavily(self, request: Request) -> Response:
        if request.headers.get("authorization") != "Bearer tavily-key":
            return JSONResponse({"detail": "unauthorized"}, status_code=401)
        body = json.loads(await request.body())
        self.searches.append({"provider": "tavily", "query": body["query"]})
        results = [{"url": hit["url"], "title": hit["title"], "content": hit["snippet"], "score": 0.9}
                   for hit in self._hits(body["query"])]  # fmt: skip
        return JSONResponse({"query": body["query"], "results": results})

    async def _page(self, request: Request) -> Response:
        name = request.path_params["name"]
        self.fetched.append(name)
        if name == "slow":
            await anyio.sleep(30)
        if name == "huge":
            return HTMLResponse("<html><body><p>" + "x" * (8 * 1024 * 1024) + "</p></body></html>")
        if name == "to-metadata":
            return RedirectResponse("http://169.254.169.254/latest/meta-data/", status_code=302)
        if name == "to-loopback":
            return RedirectResponse(f"{self.base}/pages/comets", status_code=302)
        if name == "binary":
            return Response(b"\x00\x01" * 100, media_type="application/octet-stream")
        if name not in PAGES:
            return PlainTextResponse("not found", status_code=404)
        title, text = PAGES[name]
        return HTMLResponse(_HTML.format(title=title, text=text, filler=_FILLER))
