"""``file_search`` run by the server over the tenant's vector stores, on every backend.

The model sees one function, ``file_search(query)``; when it calls it, the output holds a
``file_search_call`` item (``queries``, and ``results`` when ``include`` asks for
``file_search_call.results``) with OpenAI's events, the search runs, and the model reads the
passages found as the call's output in its next round. The answer's text then cites the files the
passages came from (``file_citation`` annotations at its end: local models do not place markers).
A ``file_search`` tool without vector stores is the backend's own (the simulator's), or none.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Mapping, Sequence
from dataclasses import dataclass
from functools import partial
from typing import Any, ClassVar, Protocol

from responsa.protocol import (
    FileSearchCall,
    FileSearchResult,
    FileSearchTool,
    FunctionCall,
    FunctionCallOutput,
    FunctionTool,
    InvalidRequest,
    Item,
    SearchVectorStoreRequest,
    StreamEvent,
    Tool,
    ToolRef,
    VectorStoreSearchPage,
    new_id,
)

from ..files import check_filter
from ._hosted import ArgumentCall, hosted_end, hosted_event
from ._kind import Recorded, Replay, Route, ServerContext, ServerRun, ToolPlan, ToolSetup, Where

__all__ = ["FileSearchKind", "FileSearcher", "VectorSearch", "VectorStores"]

FILE_SEARCH = "file_search"
"""The tool's type, and the name of the function the model calls."""

_FUNCTION = FunctionTool(
    name=FILE_SEARCH,
    description="Search the user's uploaded files for passages about a question. Use it to answer "
    "questions about their documents, reports, notes or manuals.",
    parameters={
        "type": "object",
        # maxLength: a small model held to the call by grammar otherwise can loop inside the string.
        "properties": {
            "query": {"type": "string", "description": "What to look for, in a few words", "maxLength": 100}
        },
        "required": ["query"],
    },
)


class VectorSearch(Protocol):
    """The tenant's vector stores, as the file search reads them."""

    async def exists(self, vector_store_id: str) -> bool: ...

    async def search(self, vector_store_id: str, request: SearchVectorStoreRequest) -> VectorStoreSearchPage: ...


class VectorStores(Protocol):
    """The server's vector stores, seen as each tenant sees its own."""

    def for_tenant(self, tenant: str) -> VectorSearch: ...


@dataclass
class FileSearcher:
    """The request's ``file_search`` tool, bound to the caller's vector stores."""

    stores: VectorSearch
    vector_store_ids: list[str]
    max_num_results: int = 10
    filters: dict[str, Any] | None = None
    ranking_options: dict[str, Any] | None = None

    async def search(self, query: str) -> list[FileSearchResult]:
        """The best passages across the vector stores, best first, as ``file_search_call.results``."""
        if not query.strip():
            return []
        asked = SearchVectorStoreRequest.model_validate(
            {"query": query, "max_num_results": self.max_num_results, "filters": self.filters,
             "ranking_options": self.ranking_options}
        )  # fmt: skip
        found = [hit for store_id in self.vector_store_ids for hit in (await self.stores.search(store_id, asked)).data]
        found.sort(key=lambda hit: -hit.score)
        return [
            FileSearchResult(file_id=hit.file_id, filename=hit.filename, score=hit.score, text=hit.content[0].text,
                             attributes=hit.attributes or {})
            for hit in found[: self.max_num_results]
        ]  # fmt: skip


async def _searcher(setup: ToolSetup, vector_stores: VectorStores | None) -> FileSearcher | None:
    """The server's file search for the request's ``file_search`` tool, when it names vector stores
    (their existence is checked: another tenant's or an unknown id is a 400, except on a simulated
    model, which then searches as it does without stores); None otherwise."""
    stores = vector_stores.for_tenant(setup.tenant) if vector_stores is not None else None
    for index, tool in enumerate(setup.request.tools):
        if not isinstance(tool, FileSearchTool) or stores is None:
            continue
        if not tool.vector_store_ids:
            return None
        if tool.filters is not None:  # checked now, not when the model first searches
            check_filter(tool.filters, f"tools[{index}].filters")
        for vector_store_id in tool.vector_store_ids:
            if not await stores.exists(vector_store_id):
                if setup.simulated:
                    return None
                raise InvalidRequest(
                    f"Vector store '{vector_store_id}' not found.", param=f"tools[{index}].vector_store_ids"
                )
        limit = 10 if tool.max_num_results is None else tool.max_num_results
        return FileSearcher(stores, tool.vector_store_ids, limit, tool.filters, tool.ranking_options)
    return None


async def _run(
    searcher: FileSearcher, item: FileSearchCall, context: ServerContext, where: Where
) -> AsyncIterator[list[StreamEvent]]:
    """Search; the results end the item, and the answer will cite the files they came from."""
    yield [hosted_event("file_search_call", "searching", where)]
    context.timeline.mark("file_search.started", item_id=item.id)
    results = await searcher.search(item.queries[0])
    context.timeline.mark("file_search.ended", item_id=item.id, results=len(results))
    item.status, item.results = "completed", results  # stored always; shown per include (_includes.py)
    for hit in results:
        if hit.file_id:
            context.annotations.cite_file(hit.file_id, hit.filename or "")
    yield hosted_end(item, context, where)


def _start(searcher: FileSearcher, item: FileSearchCall, query: str) -> ServerRun:
    item.queries = [query]
    return partial(_run, searcher, item)


def _cut(item: FileSearchCall) -> None:
    item.status = "incomplete"


class FileSearchKind:
    """Searches the tenant's vector stores (None: this server has none, the tool is left out)."""

    name = FILE_SEARCH
    tool_types = (FILE_SEARCH,)
    item_types: ClassVar[Mapping[str, str]] = {"file_search_call": "fs"}

    def metered(self, items: Sequence[Item]) -> Mapping[str, int]:
        """What a response's searches count in the usage ledger: a call each."""
        return {"file_search_calls": len(items)}

    progress = "searching"
    """The phase of its progress event between ``in_progress`` and ``completed``."""

    def __init__(self, vector_stores: VectorStores | None) -> None:
        self._vector_stores = vector_stores

    def offer(self, tool: Tool, tools: ToolPlan, param: str) -> None:
        """Nothing without the tenant's vector stores: see :meth:`prepare`."""

    async def prepare(self, setup: ToolSetup) -> list[Recorded]:
        searcher = await _searcher(setup, self._vector_stores)
        if searcher is not None:
            setup.tools.add(_FUNCTION, Route(FILE_SEARCH, FILE_SEARCH, target=searcher), "tools")
        return []

    def open_call(self, route: Route, call_id: str) -> ArgumentCall:
        item = FileSearchCall(id=new_id("fs"), status="in_progress")
        return ArgumentCall(item, "query", partial(_start, route.target, item), partial(_cut, item))

    def chosen(self, ref: ToolRef, name: str, route: Route) -> bool:
        return ref.type == FILE_SEARCH

    def replay(self, item: Item, context: Replay) -> list[Item] | None:
        """A search holding its results (stored: later turns read them too) as a function call and its
        output; the backend's own searches are read as they are."""
        if not isinstance(item, FileSearchCall) or item.results is None:
            return None
        passages = [{"file": hit.filename, "text": hit.text} for hit in item.results]
        output = json.dumps(passages, ensure_ascii=False) if passages else "No passages matched."
        call_id = item.id or new_id("fs")
        query = json.dumps({"query": (item.queries or [""])[0]})
        return [
            FunctionCall(id=call_id, call_id=call_id, name=FILE_SEARCH, arguments=query, status="completed"),
            FunctionCallOutput(call_id=call_id, output=output, status="completed"),
        ]
