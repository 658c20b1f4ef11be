"""The typed items and objects the server answers with, checked against the openai SDK's own types (the best machine-readable
statement of OpenAI's wire format): every field OpenAI has is there, with the same literal values, and
what the server writes validates as OpenAI's model."""

from __future__ import annotations

import typing

from openai.types import VectorStore, VectorStoreSearchResponse
from openai.types.responses import FileSearchTool as OpenAIFileSearchTool
from openai.types.responses import ResponseFileSearchToolCall
from openai.types.responses.response_file_search_tool_call import Result
from openai.types.responses.tool import Mcp as OpenAIMcpTool
from openai.types.vector_stores import VectorStoreFile, VectorStoreFileBatch
from pydantic import BaseModel

from responsa.protocol import (
    FileCounts,
    FileSearchCall,
    FileSearchResult,
    FileSearchTool,
    McpTool,
    VectorStoreFileBatchObject,
    VectorStoreFileObject,
    VectorStoreObject,
    VectorStoreSearchResult,
)


def _literals(model: type[BaseModel], field: str) -> set[str]:
    return set(typing.get_args(model.model_fields[field].annotation))


def test_file_search_call_has_openai_fields_and_statuses() -> None:
    assert set(ResponseFileSearchToolCall.model_fields) <= set(FileSearchCall.model_fields)
    assert set(Result.model_fields) <= set(FileSearchResult.model_fields)
    assert _literals(FileSearchCall, "status") == _literals(ResponseFileSearchToolCall, "status")


def test_the_server_run_tools_have_openai_fields() -> None:
    """The tools the server runs itself are typed (not kept as sent), with every field OpenAI's have."""
    for ours, theirs in [(FileSearchTool, OpenAIFileSearchTool), (McpTool, OpenAIMcpTool)]:
        missing = set(theirs.model_fields) - set(ours.model_fields)
        assert not missing, (ours, missing)
    tool = OpenAIFileSearchTool(type="file_search", vector_store_ids=["vs_1"], max_num_results=5)
    assert FileSearchTool.model_validate(tool.model_dump()).model_dump() == tool.model_dump(exclude_none=True)


def test_what_the_server_writes_validates_as_openai_reads_it() -> None:
    result = FileSearchResult(file_id="file_1", filename="a.txt", score=0.5, text="x", attributes={"k": "v"})
    call = FileSearchCall(id="fs_1", status="completed", queries=["tides"], results=[result])
    parsed = ResponseFileSearchToolCall.model_validate(call.model_dump(mode="json"))
    assert parsed.results is not None and parsed.results[0].filename == "a.txt"
    without = ResponseFileSearchToolCall.model_validate(
        FileSearchCall(id="fs_2", queries=["q"]).model_dump(mode="json")
    )
    assert without.results is None


def test_vector_store_objects_have_openai_fields_and_values() -> None:
    pairs = [(VectorStoreObject, VectorStore), (VectorStoreFileObject, VectorStoreFile),
             (VectorStoreFileBatchObject, VectorStoreFileBatch), (FileCounts, VectorStore.model_fields["file_counts"].annotation),
             (VectorStoreSearchResult, VectorStoreSearchResponse)]  # fmt: skip
    for ours, theirs in pairs:
        assert set(theirs.model_fields) <= set(ours.model_fields), ours  # type: ignore[union-attr]
    for ours, theirs in pairs[:3]:
        assert _literals(ours, "status") == _literals(theirs, "status"), ours
        assert _literals(ours, "object") == _literals(theirs, "object"), ours
