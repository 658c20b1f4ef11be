"""``web_search`` (and ``web_search_preview``, dated variants too), run by the server for any model
through the configured search provider (``--web-search``).

The model sees one function, ``web_search(query)``. When it calls it, the output holds a
``web_search_call`` item (``action: {"type": "search", "query"}``) with OpenAI's events
(``in_progress``, ``searching``, ``completed``); the server searches, keeps the hits from the
``allowed_domains``, reads the top pages (as many and as long as ``search_context_size`` says) through
the egress policy, and the model reads them, numbered, as the call's output in its next round. The
answer's ``[n]`` markers become ``url_citation`` annotations. The pages are the item's ``sources``
(``include: ["web_search_call.action.sources"]``) and ``results`` (``web_search_call.results``).
``external_web_access: false`` (Codex sends it) searches the engine's index only: no page is fetched.
On the simulator, and without a provider, the tool is not this kind's (simulated, or left out).
"""

from __future__ import annotations

import json
import logging
from collections.abc import AsyncIterator, Mapping, Sequence
from dataclasses import dataclass
from functools import partial
from typing import Any, ClassVar
from urllib.parse import urlsplit

import anyio

from responsa.config import Settings
from responsa.external import Page, PageFetcher, SearchHit, SearchProvider, UrlPolicy, WebSearch
from responsa.protocol import (
    WEB_SEARCH_TYPES,
    Capability,
    FunctionCall,
    FunctionCallOutput,
    FunctionTool,
    InvalidRequest,
    Item,
    StreamEvent,
    Tool,
    ToolRef,
    WebSearchAction,
    WebSearchCall,
    WebSearchResult,
    WebSearchSource,
    WebSearchTool,
    failure_of,
    new_id,
)

from ._hosted import ArgumentCall, hosted_end, hosted_event
from ._kind import Recorded, Replay, Route, ServerContext, ServerRun, ToolPlan, ToolSetup, Where

__all__ = ["WebSearchKind", "WebSearcher"]

logger = logging.getLogger(__name__)

NAME = "web_search"

_CONTEXT = {"low": (3, 1500), "medium": (5, 3000), "high": (8, 6000)}
"""``search_context_size`` → (pages read, characters of each the model reads)."""

_FUNCTION = FunctionTool(
    name=NAME,
    description="Search the web for current information; returns numbered sources with their text. "
    "Cite a source by its number in brackets, like [1].",
    parameters={
        "type": "object",
        "properties": {"query": {"type": "string", "description": "What to search for", "maxLength": 200}},
        "required": ["query"],
    },
)


@dataclass(frozen=True)
class WebSearcher:
    """The request's web_search tool, bound to the server's provider and page fetcher."""

    web: WebSearch
    allowed_domains: tuple[str, ...] = ()
    pages: int = 5
    characters: int = 3000
    country: str | None = None
    live: bool = True
    """Read the pages themselves; False (``external_web_access: false``, Codex's default): the search
    engine's own index only (its snippets), no page fetched."""

    def allowed(self, url: str) -> bool:
        """Whether ``url`` is on an allowed domain (or a subdomain of one); any, without a filter."""
        if not self.allowed_domains:
            return True
        host = (urlsplit(url).hostname or "").lower()
        return any(host == domain or host.endswith(f".{domain}") for domain in self.allowed_domains)

    async def search(self, query: str) -> list[tuple[SearchHit, Page | None]]:
        """The top hits from the allowed domains, each with its page when it could be read."""
        hits = [
            hit for hit in await self.web.provider.search(query, self.pages * 2, self.country) if self.allowed(hit.url)
        ]
        hits = hits[: self.pages]
        pages: list[Page | None] = [None] * len(hits)

        async def read(index: int, hit: SearchHit) -> None:
            pages[index] = await self.web.pages.fetch(hit.url)

        if self.live:
            async with anyio.create_task_group() as group:
                for index, hit in enumerate(hits):
                    group.start_soon(read, index, hit)
        return list(zip(hits, pages, strict=True))


def _searcher(tool: WebSearchTool, web: WebSearch) -> WebSearcher:
    pages, characters = _CONTEXT[tool.search_context_size or "medium"]
    domains = tuple(_domain(entry) for entry in (tool.filters.allowed_domains or [])) if tool.filters else ()
    country = (tool.user_location or {}).get("country")
    live = tool.external_web_access is not False
    return WebSearcher(web, domains, pages, characters, country if isinstance(country, str) else None, live)


def _domain(entry: str) -> str:
    """``https://www.Example.com/x`` or ``example.com`` → the host, lower case."""
    return (urlsplit(entry if "://" in entry else f"//{entry}").hostname or entry).lower()


async def _run(
    searcher: WebSearcher, item: WebSearchCall, context: ServerContext, where: Where
) -> AsyncIterator[list[StreamEvent]]:
    """Search and read; the pages end the item, numbered for the answer to cite."""
    yield [hosted_event("web_search_call", "searching", where)]
    query = item.action.query or ""
    context.timeline.mark("web_search.started", item_id=item.id)
    try:
        found = await searcher.search(query) if query.strip() else []
    except Exception as failure:  # a provider down or refusing: the model is told, the response goes on
        name = searcher.web.provider.name
        logger.warning("web search for %r failed with %s: %s", query, name, failure_of(failure))
        context.timeline.mark("web_search.ended", item_id=item.id, error=type(failure).__name__)
        item.status, item.results = "failed", []
    else:
        context.timeline.mark("web_search.ended", item_id=item.id, results=len(found))
        results = []
        for hit, page in found:
            title = page.title if page else hit.title
            text = (page.text if page else hit.snippet)[: searcher.characters]
            results.append(WebSearchResult(number=context.annotations.add_source(hit.url, title), url=hit.url,
                                           title=title, text=text))  # fmt: skip
        item.status, item.results = "completed", results
        item.action = item.action.model_copy(update={"sources": [WebSearchSource(url=hit.url) for hit, _ in found]})
    yield hosted_end(item, context, where)


def _start(searcher: WebSearcher, item: WebSearchCall, query: str) -> ServerRun:
    item.action = WebSearchAction(type="search", query=query)
    return partial(_run, searcher, item)


def _cut(item: WebSearchCall) -> None:
    item.status = "failed"


class WebSearchKind:
    """Searches with the configured provider and reads the pages (None: ``--web-search`` is off, the
    tool is left out). ``status``: what ``/v1/server`` says of it."""

    name = NAME
    tool_types = WEB_SEARCH_TYPES
    item_types: ClassVar[Mapping[str, str]] = {"web_search_call": "ws"}

    def metered(self, items: Sequence[Item]) -> Mapping[str, int]:
        """What a response's searches count in the usage ledger: a call each."""
        return {"web_search_calls": len(items)}

    progress = "searching"
    """The phase of its progress event between ``in_progress`` and ``completed``."""

    def __init__(self, web: WebSearch | None, status: dict[str, Any] | None = None) -> None:
        self._web = web
        self.status = status or {"enabled": web is not None}

    @classmethod
    def configured(cls, settings: Settings, provider: SearchProvider | None, pages_read: Capability) -> WebSearchKind:
        """The web search the settings ask for, off without pages it can read. A provider that did not
        answer at start is reported, not switched off: a service may come up later, and each call tries
        it again."""
        if provider is None:
            why = "no --web-search provider: web_search is left out (ignored_tools), simulated on the simulator"
            return cls(None, {"enabled": False, "provider": None, "detail": why})
        if not pages_read.on:
            return cls(None, {"enabled": False, "provider": provider.name, "detail": f"off: {pages_read.detail}"})
        policy = UrlPolicy(allow_loopback=not settings.api_keys, public=True, subject="page URL")
        pages = PageFetcher(policy, settings.web_fetch_timeout_secs, settings.web_fetch_max_bytes)
        status = {"enabled": True, "provider": provider.name, "detail": "run by the server"}
        return cls(WebSearch(provider, pages), status)

    def offer(self, tool: Tool, tools: ToolPlan, param: str) -> None:
        """Nothing without the server's provider (see :meth:`prepare`); what no search here can honour is
        a 400 now."""
        if not isinstance(tool, WebSearchTool):
            return
        if tool.search_content_types is not None and "text" not in tool.search_content_types:
            raise InvalidRequest("Only text is searched here: 'search_content_types' must include 'text'.",
                                 param=f"{param}.search_content_types", code="unsupported_value")  # fmt: skip

    async def prepare(self, setup: ToolSetup) -> list[Recorded]:
        web = self._web
        if web is None or setup.simulated:
            return []  # left out (ignored_tools), or the simulator's own
        tool = next((tool for tool in setup.request.tools if isinstance(tool, WebSearchTool)), None)
        if tool is not None:
            setup.tools.add(_FUNCTION, Route(NAME, NAME, target=_searcher(tool, web)), "tools")
        return []

    def open_call(self, route: Route, call_id: str) -> ArgumentCall:
        item = WebSearchCall(id=new_id("ws"), status="in_progress", action=WebSearchAction(type="search"))
        return ArgumentCall(item, "query", partial(_start, route.target, item), partial(_cut, item))

    def chosen(self, ref: ToolRef, name: str, route: Route) -> bool:
        return ref.type in WEB_SEARCH_TYPES

    def replay(self, item: Item, context: Replay) -> list[Item] | None:
        """A search the server ran, as the model read it: a function call and its numbered sources; the
        simulator's searches are read as they are."""
        if not isinstance(item, WebSearchCall) or item.results is None:
            return None
        call_id = item.id or new_id("ws")
        query = item.action.query or ""
        return [
            FunctionCall(id=call_id, call_id=call_id, name=NAME, arguments=json.dumps({"query": query}),
                         status="completed"),
            FunctionCallOutput(call_id=call_id, output=_as_text(query, item), status="completed"),
        ]  # fmt: skip


def _as_text(query: str, item: WebSearchCall) -> str:
    if item.status == "failed":
        return f"The web search for {query!r} failed; answer without it, and say so."
    if not item.results:
        return f"The web search for {query!r} found nothing."
    sources = "\n\n".join(f"[{hit.number}] {hit.title}\n{hit.url}\n{hit.text}" for hit in item.results)
    return f"Web results for {query!r}. Cite a source by its number in brackets, like [1].\n\n{sources}"
