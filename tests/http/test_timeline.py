"""GET /v1/responses/{id}/timeline: every stored response keeps a timing record (request arrival, each
model call and its first output, each output item's start and end, each MCP call's run, the end with
token counts), enough to draw a timeline."""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

import httpx
import openai
import pytest

from tests.conftest import serve_app
from tests.engine.tools.mcp_server import streamable_app


@pytest.fixture(scope="module")
def mcp_url() -> Iterator[str]:
    with serve_app(streamable_app()) as live:
        yield f"{live.url}/mcp"


def _timeline(http: httpx.Client, response_id: str) -> dict[str, Any]:
    reply = http.get(f"/v1/responses/{response_id}/timeline")
    assert reply.status_code == 200, reply.text
    body: dict[str, Any] = reply.json()
    assert body["object"] == "response.timeline" and body["response_id"] == response_id
    times = [mark["at"] for mark in body["marks"]]
    assert times == sorted(times)  # in the order things happened
    return body


def _events(body: dict[str, Any]) -> list[str]:
    return [mark["event"] for mark in body["marks"]]


def test_a_streamed_turn_records_its_model_call_items_and_end(client: openai.OpenAI, http: httpx.Client) -> None:
    before = time.time()
    with client.responses.stream(model="sim", input="Tell me about rivers") as stream:
        response = stream.get_final_response()
    body = _timeline(http, response.id)
    assert _events(body) == ["request.received", "model.called", "model.first_output",
                             "output_item.added", "output_item.done", "response.ended"]  # fmt: skip
    assert before <= body["marks"][0]["at"] <= body["marks"][-1]["at"] <= time.time()
    added, done = body["marks"][3], body["marks"][4]
    assert added["item_id"] == done["item_id"] == response.output[0].id and added["item_type"] == "message"
    assert response.usage is not None
    end = body["marks"][-1]
    assert (end["status"], end["input_tokens"], end["output_tokens"]) == (
        "completed", response.usage.input_tokens, response.usage.output_tokens
    )  # fmt: skip
    assert body["usage"]["total_tokens"] == response.usage.total_tokens


def test_a_turn_answered_in_json_records_the_same_marks(client: openai.OpenAI, http: httpx.Client) -> None:
    """A create answered in JSON makes none of the stream's events (no one reads them), yet its items'
    starts and ends are marked as a stream's are."""
    response = client.responses.create(model="sim", input="Tell me about rivers")
    body = _timeline(http, response.id)
    assert _events(body) == ["request.received", "model.called", "model.first_output",
                             "output_item.added", "output_item.done", "response.ended"]  # fmt: skip
    added, done = body["marks"][3], body["marks"][4]
    assert added["item_id"] == done["item_id"] == response.output[0].id and added["item_type"] == "message"
    assert added["output_index"] == done["output_index"] == 0


def test_mcp_calls_are_marked_between_two_model_calls(client: openai.OpenAI, http: httpx.Client, mcp_url: str) -> None:
    tool = {"type": "mcp", "server_label": "calc", "server_url": mcp_url, "require_approval": "never"}
    response = client.responses.create(model="sim", input="Please add 2 and 3", tools=[tool])  # type: ignore[list-item]
    events = _events(_timeline(http, response.id))
    call = next(item for item in response.output if item.type == "mcp_call")
    started, ended = events.index("mcp.call.started"), events.index("mcp.call.ended")
    assert events.count("model.called") == 2
    assert events.index("model.called") < started < ended < len(events) - 1 - events[::-1].index("model.called")
    marks = _timeline(http, response.id)["marks"]
    assert marks[started]["item_id"] == call.id and marks[started]["name"] == "add"


def test_a_background_response_has_one_and_unknown_ids_are_404(client: openai.OpenAI, http: httpx.Client) -> None:
    queued = client.responses.create(model="sim", input="Reply with: later", background=True)
    deadline = time.monotonic() + 10
    while client.responses.retrieve(queued.id).status in ("queued", "in_progress"):
        assert time.monotonic() < deadline
        time.sleep(0.05)
    assert _events(_timeline(http, queued.id))[-1] == "response.ended"
    missing = http.get("/v1/responses/resp_missing/timeline")
    assert missing.status_code == 404 and missing.json()["error"]["param"] == "response_id"
