"""``file_search`` run by the server over the tenant's vector stores, on every backend.

The model sees one function, ``file_search(query)``; when it calls it, the output holds a
``file_search_call`` item (``queries``, and ``results`` when ``include`` asks for
``file_search_call.results``) with OpenAI's events, the search runs, and the model reads the
passages found as the call's output in its next round. The answer's text then cites the files the
passages came from (``file_citation`` annotations at its end: local models do not place markers).
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from dataclasses import dataclass
from functools import partial
from typing import Any

from responsa.protocol import (
    CreateResponseRequest,
    FileSearchCall,
    FileSearchResult,
    FunctionCall,
    FunctionCallOutput,
    FunctionTool,
    HostedToolEvent,
    InvalidRequest,
    Item,
    OutputItemEvent,
    SearchVectorStoreRequest,
    StreamEvent,
    VectorStoreSearchResult,
    new_id,
)

from ._attribute_filters import check_filter
from ._emitter import Emitter
from ._includes import search_as_shown
from ._server_calls import ServerTools
from ._vector_stores import VectorStoreService

__all__ = [
    "FILE_SEARCH",
    "FileSearchOutput",
    "FileSearcher",
    "as_function_call",
    "file_search_tool",
    "plan_file_search",
]

FILE_SEARCH = "file_search"
"""The function the model calls, and the route label that marks it as the server's own."""


def file_search_tool() -> FunctionTool:
    return FunctionTool(
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


@dataclass
class FileSearcher:
    """The request's ``file_search`` tool, bound to the caller's vector stores."""

    service: VectorStoreService
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
        found: list[VectorStoreSearchResult] = []
        for vector_store_id in self.vector_store_ids:
            found += (await self.service.search(vector_store_id, asked)).data
        found.sort(key=lambda hit: -hit.score)
        return [
            FileSearchResult(file_id=hit.file_id, filename=hit.filename, score=hit.score, text=hit.content[0].text,
                             attributes=hit.attributes or {})
            for hit in found[: self.max_num_results]
        ]  # fmt: skip


async def plan_file_search(
    request: CreateResponseRequest, service: VectorStoreService | None, simulated: bool = False
) -> FileSearcher | None:
    """The server's file search for the request's ``file_search`` tool, when it names vector stores
    (their existence is checked: another tenant's or an unknown id is a 400, except on a ``simulated``
    model, which then searches as it does without stores); None otherwise."""
    for index, tool in enumerate(request.tools):
        if tool.type != "file_search" or service is None:
            continue
        spec = tool.model_dump()
        ids = spec.get("vector_store_ids")
        if not ids:
            return None  # no stores: the backend's own (the simulator's) file search, or none
        if not isinstance(ids, list) or not all(isinstance(one, str) for one in ids):
            raise InvalidRequest("'vector_store_ids' must be a list of ids.", param=f"tools[{index}].vector_store_ids")
        limit = spec.get("max_num_results")
        limit = 10 if limit is None else limit
        if not isinstance(limit, int) or not 1 <= limit <= 50:
            raise InvalidRequest("'max_num_results' must be from 1 to 50.", param=f"tools[{index}].max_num_results")
        if spec.get("filters") is not None:  # checked now, not when the model first searches
            check_filter(spec["filters"], f"tools[{index}].filters")
        for vector_store_id in ids:
            if not await service.exists(vector_store_id):
                if simulated:
                    return None
                raise InvalidRequest(
                    f"Vector store '{vector_store_id}' not found.", param=f"tools[{index}].vector_store_ids"
                )
        return FileSearcher(service, ids, limit, spec.get("filters"), spec.get("ranking_options"))
    return None


def as_function_call(item: FileSearchCall) -> list[Item]:
    """A search holding its results, as the model reads it: its function call and output."""
    query = (item.queries or [""])[0]
    passages = [{"file": hit.filename, "text": hit.text} for hit in item.results or []]
    output = json.dumps(passages, ensure_ascii=False) if passages else "No passages matched."
    call_id = item.id or new_id("fs")
    return [
        FunctionCall(id=call_id, call_id=call_id, name=FILE_SEARCH, arguments=json.dumps({"query": query}),
                     status="completed"),
        FunctionCallOutput(call_id=call_id, output=output, status="completed"),
    ]  # fmt: skip


@dataclass
class _Search:
    item: FileSearchCall
    index: int


class FileSearchOutput(Emitter):
    """Records the model's file searches: each waits in ``server_calls`` to be run."""

    cited: list[dict[str, str]]

    def _init_searches(self) -> None:
        self.cited = []

    def _new_search(self) -> FileSearchCall:
        return FileSearchCall(id=new_id("fs"), status="in_progress")

    def _search_event(self, phase: str, item: FileSearchCall, index: int) -> StreamEvent:
        kind = f"response.file_search_call.{phase}"
        return self._emit(
            HostedToolEvent.model_validate({"type": kind, "item_id": item.id or "", "output_index": index})
        )

    def _search_asked(self, item: FileSearchCall, index: int, arguments: str) -> None:
        """The model finished writing the call: its query is known, the search waits to run."""
        try:
            query = str(json.loads(arguments).get("query") or "")
        except (ValueError, AttributeError):
            query = arguments
        item.queries = [query]
        self.server_calls.append(partial(self._run_search, _Search(item, index)))

    async def _run_search(self, search: _Search, tools: ServerTools) -> AsyncIterator[list[StreamEvent]]:
        assert tools.file_search is not None  # only the file search route makes searches
        yield [self._search_event("searching", search.item, search.index)]
        self.timeline.mark("file_search.started", item_id=search.item.id)
        results = await tools.file_search.search(search.item.queries[0])
        self.timeline.mark("file_search.ended", item_id=search.item.id, results=len(results))
        yield self.search_finished(search, results)

    def search_finished(self, search: _Search, results: list[FileSearchResult]) -> list[StreamEvent]:
        item = search.item
        item.status = "completed"
        item.results = results  # stored always; shown per include (_includes.py)
        for hit in results:
            if hit.file_id and all(cited["file_id"] != hit.file_id for cited in self.cited):
                self.cited.append({"file_id": hit.file_id, "filename": hit.filename or ""})
        shown = self._snapshot(search_as_shown(item, self.response))
        done = OutputItemEvent(type="response.output_item.done", output_index=search.index, item=shown)
        return [self._search_event("completed", item, search.index), self._emit(done)]

    def citations(self, text: str) -> list[dict[str, Any]]:
        """``file_citation`` annotations for an answer written after searches, at its end."""
        return [{"type": "file_citation", "index": len(text), **cited} for cited in self.cited]
