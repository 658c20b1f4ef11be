"""The ``file_search`` tool run by the server over real vector stores, through the openai SDK, on
SQLite and PostgreSQL: the model (the simulator, and the embedded model when forced) calls it, the
output holds a ``file_search_call`` (with results when included), the answer cites the files, and
the streaming events come in OpenAI's order."""

from __future__ import annotations

import time
from contextlib import ExitStack
from typing import Any

import httpx
import openai
import pytest

from responsa.backends.llama_cpp import DEFAULT_MODEL_NAME
from responsa.config import Settings, UpstreamConfig
from tests.backends.mock_upstream import MockUpstream, Stream, text_chunks
from tests.conftest import serve, serve_app
from tests.http.test_vector_stores import make_pdf


@pytest.fixture
def vector_store(client: openai.OpenAI) -> str:
    pdf = client.files.create(file=("balloons.pdf", make_pdf("Helium balloons rise because helium is lighter than air")),
                              purpose="assistants")  # fmt: skip
    notes = client.files.create(file=("tides.txt", b"The moon's gravity pulls the oceans and makes the tides."),
                                purpose="assistants")  # fmt: skip
    store = client.vector_stores.create(name="docs", file_ids=[pdf.id, notes.id])
    deadline = time.monotonic() + 30
    while client.vector_stores.retrieve(store.id).file_counts.in_progress:
        assert time.monotonic() < deadline
        time.sleep(0.05)
    return store.id


def _tool(vector_store: str, **extra: Any) -> dict[str, Any]:
    return {"type": "file_search", "vector_store_ids": [vector_store], **extra}


def test_the_model_searches_and_the_answer_cites_the_file(client: openai.OpenAI, vector_store: str) -> None:
    response = client.responses.create(
        model="gpt-4.1",
        input="Search my documents: why do helium balloons rise?",
        tools=[_tool(vector_store)],  # type: ignore[list-item]
        include=["file_search_call.results"],
    )
    call, message = response.output[0], response.output[-1]
    assert call.type == "file_search_call" and call.status == "completed" and call.queries
    assert call.results and call.results[0].filename == "balloons.pdf" and "lighter than air" in call.results[0].text
    assert 0 < (call.results[0].score or 0) <= 1
    assert message.type == "message" and "lighter than air" in response.output_text  # answered from the passage
    [citation] = [a for a in message.content[0].annotations if a.type == "file_citation"]  # type: ignore[union-attr]
    assert citation.filename == "balloons.pdf" and citation.index == len(response.output_text)
    assert getattr(response, "ignored_tools", None) in (None, [])

    # Without include the results are not returned (the model still read them).
    plain = client.responses.create(
        model="gpt-4.1",
        input="Search my documents about the tides",
        tools=[_tool(vector_store)],  # type: ignore[list-item]
    )
    assert plain.output[0].type == "file_search_call" and plain.output[0].results is None
    assert "gravity" in plain.output_text
    assert client.responses.retrieve(plain.id).output[0].results is None  # type: ignore[union-attr]
    streamed = client.responses.create(model="gpt-4.1", input="Search my documents about the tides",
                                       tools=[_tool(vector_store)], stream=True)  # type: ignore[list-item]  # fmt: skip
    *events, completed = list(streamed)
    assert completed.type == "response.completed" and completed.response.output[0].type == "file_search_call"
    # Each annotation is streamed as it is known, before the text's done event, as the final text has it.
    added = [event for event in events if event.type == "response.output_text.annotation.added"]
    final = completed.response.output[-1].content[0].annotations  # type: ignore[union-attr]
    assert added and [event.annotation.model_dump() for event in added] == [a.model_dump() for a in final]  # type: ignore[union-attr]
    assert [event.annotation_index for event in added] == list(range(len(final)))
    kinds = [event.type for event in events]
    assert kinds.index("response.output_text.annotation.added") < kinds.index("response.output_text.done")
    assert completed.response.output[0].results is None  # hidden in the last event too, though stored


def test_a_retrieve_shows_the_results_its_include_asks_for(
    client: openai.OpenAI, http: httpx.Client, vector_store: str
) -> None:
    """Results are stored whether or not the create asked: a retrieve with ``include`` shows them, one
    without shows what the create showed (in a listing too); so does the conversation."""
    conversation = client.conversations.create()
    plain = client.responses.create(model="gpt-4.1", input="Search my documents about the tides",
                                    tools=[_tool(vector_store)], conversation=conversation.id)  # type: ignore[list-item]  # fmt: skip
    assert plain.output[0].results is None  # type: ignore[union-attr]
    shown = client.responses.retrieve(plain.id, include=["file_search_call.results"])
    assert shown.output[0].results and shown.output[0].results[0].filename == "tides.txt"  # type: ignore[union-attr]
    assert shown.output[1:] == plain.output[1:]
    assert client.responses.retrieve(plain.id) == plain
    listed = [r for r in http.get("/v1/responses", params={"limit": 100}).json()["data"] if r["id"] == plain.id]
    assert listed and listed[0]["output"][0].get("results") is None
    items = client.conversations.items.list(conversation.id).data
    assert [getattr(item, "results", None) for item in items if item.type == "file_search_call"] == [None]
    included = client.responses.create(model="gpt-4.1", input="Search my documents about the tides",
                                       tools=[_tool(vector_store)], include=["file_search_call.results"])  # type: ignore[list-item]  # fmt: skip
    assert included.output[0].results  # type: ignore[union-attr]
    assert client.responses.retrieve(included.id) == included  # as the create showed it
    assert client.responses.retrieve(included.id, include=["message.output_text.logprobs"]).output[0].results is None  # type: ignore[union-attr]


def test_streaming_events_in_order(client: openai.OpenAI, vector_store: str) -> None:
    events = list(client.responses.create(
        model="gpt-4.1", input="Search my documents for helium", tools=[_tool(vector_store)], stream=True,  # type: ignore[list-item]
        include=["file_search_call.results"],
    ))  # fmt: skip
    kinds = [event.type for event in events]
    start = kinds.index("response.file_search_call.in_progress")
    assert kinds[start - 1] == "response.output_item.added" and events[start - 1].item.type == "file_search_call"  # type: ignore[union-attr]
    assert kinds[start : start + 4] == [
        "response.file_search_call.in_progress", "response.file_search_call.searching",
        "response.file_search_call.completed", "response.output_item.done",
    ]  # fmt: skip
    done = events[start + 3].item  # type: ignore[union-attr]
    assert done.status == "completed" and done.results and done.results[0].filename == "balloons.pdf"
    assert kinds[-1] == "response.completed" and [e.sequence_number for e in events] == list(range(len(events)))


def test_tool_choice_forces_a_search_on_every_backend(client: openai.OpenAI, vector_store: str) -> None:
    forced = client.responses.create(
        model="sim",
        input="Hello there",
        tools=[_tool(vector_store)],
        tool_choice={"type": "file_search"},  # type: ignore[list-item]
    )
    assert forced.output[0].type == "file_search_call"
    embedded = client.responses.create(
        model=DEFAULT_MODEL_NAME, input="What makes the tides?", tools=[_tool(vector_store)],  # type: ignore[list-item]
        tool_choice={"type": "file_search"}, max_output_tokens=200, include=["file_search_call.results"],
    )  # fmt: skip
    call = embedded.output[0]
    assert call.type == "file_search_call" and call.status == "completed" and call.queries[0]
    assert len(call.queries[0]) <= 100  # the grammar bounds the query, so the call always ends
    assert embedded.output[-1].type == "message"


def test_bad_file_search_tools_are_400s(client: openai.OpenAI, vector_store: str) -> None:
    for model, tool, param in [
        (DEFAULT_MODEL_NAME, _tool("vs_missing"), "tools[0].vector_store_ids"),
        ("sim", _tool(vector_store, max_num_results=0), "tools[0].max_num_results"),
        ("sim", _tool(vector_store, filters={"type": "near", "key": "x"}), "tools[0].filters"),
    ]:
        with pytest.raises(openai.BadRequestError) as refused:
            client.responses.create(model=model, input="x", tools=[tool])  # type: ignore[list-item]
        assert refused.value.body["param"] == param  # type: ignore[index]


def test_the_simulator_simulates_a_search_of_a_missing_store(client: openai.OpenAI) -> None:
    """As LLMSim does: the tool is parsed, the search made up (no results), where a real model gets a 400."""
    reply = client.responses.create(model="sim", input="Search the document for the tides", tools=[_tool("vs_missing")])  # type: ignore[list-item]
    assert [item.type for item in reply.output] == ["file_search_call", "message"]
    call = reply.output[0]
    assert call.status == "completed" and call.results is None and "tides" in call.queries[0]  # type: ignore[union-attr]
    assert "I searched your files" in reply.output_text


def test_an_upstream_model_searches_and_reads_the_passages(tmp_path_factory: pytest.TempPathFactory) -> None:
    """Through a Chat Completions upstream: its tool call becomes the server's search, and its next
    request carries the passages as the call's result."""
    search = {"index": 0, "id": "call_0", "type": "function",
              "function": {"name": "file_search", "arguments": '{"query": "moon tides"}'}}  # fmt: skip
    with ExitStack() as stack:
        upstream = MockUpstream()
        url = f"{stack.enter_context(serve_app(upstream.app)).url}/v1"
        db = f"sqlite:///{tmp_path_factory.mktemp('fs-upstream') / 'r.db'}"
        settings = Settings(db_url=db, embedded=False, models=(UpstreamConfig(name="up-model", urls=(url,)),))
        server = stack.enter_context(serve(settings))
        client = stack.enter_context(openai.OpenAI(base_url=server.v1, api_key="unused", max_retries=0))
        notes = client.files.create(file=("tides.txt", b"The moon's gravity pulls the oceans."), purpose="assistants")
        store = client.vector_stores.create(name="n", file_ids=[notes.id])
        while client.vector_stores.retrieve(store.id).file_counts.in_progress:
            time.sleep(0.05)
        upstream.script.append(Stream([{"choices": [{"index": 0, "delta": {"tool_calls": [search]}}]},
                                       {"choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}]}]))  # fmt: skip
        upstream.script.append(Stream(text_chunks("The moon pulls the oceans.")))
        answer = client.responses.create(model="up-model", input="Why are there tides?", tools=[_tool(store.id)])  # type: ignore[list-item]

    assert [item.type for item in answer.output] == ["file_search_call", "message"]
    assert answer.output[0].queries == ["moon tides"] and answer.output_text == "The moon pulls the oceans."
    offered = upstream.requests[0]["tools"]
    assert [tool["function"]["name"] for tool in offered] == ["file_search"]
    [result] = [m for m in upstream.requests[1]["messages"] if m["role"] == "tool"]
    assert "gravity pulls the oceans" in result["content"] and "tides.txt" in result["content"]


def test_a_search_that_finds_nothing_is_answered_once(client: openai.OpenAI, vector_store: str) -> None:
    """The model reads "No passages matched." as the search's result and answers; it does not search again."""
    response = client.responses.create(
        model="gpt-4.1", input="Search my documents about volcanoes", tools=[_tool(vector_store)],  # type: ignore[list-item]
        include=["file_search_call.results"],
    )  # fmt: skip
    assert [item.type for item in response.output] == ["file_search_call", "message"]
    assert response.output[0].results == []  # type: ignore[union-attr]
    assert response.output[-1].content[0].annotations == []  # type: ignore[union-attr]
