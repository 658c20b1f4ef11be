"""SSE streaming: byte-level framing, the event state machines, and the SDK's stream helper."""

from __future__ import annotations

import json
import socket
from typing import Any

import httpx
import openai

WEATHER_TOOL = {
    "type": "function",
    "name": "get_weather",
    "description": "Get current weather for a city",
    "parameters": {
        "type": "object",
        "properties": {"location": {"type": "string"}, "units": {"type": "string", "enum": ["celsius", "fahrenheit"]}},
        "required": ["location"],
    },
}


def without_parsed(value: Any) -> Any:
    """The SDK's stream helper adds client-side ``parsed`` fields; the wire object has none."""
    if isinstance(value, dict):
        return {
            k: without_parsed(v) for k, v in value.items() if k not in ("parsed", "output_parsed", "parsed_arguments")
        }
    if isinstance(value, list):
        return [without_parsed(v) for v in value]
    return value


def stream_raw(http: httpx.Client, body: dict[str, Any], headers: dict[str, str] | None = None) -> bytes:
    with http.stream("POST", "/v1/responses", json={**body, "stream": True}, headers=headers) as reply:
        assert reply.status_code == 200
        assert reply.headers["content-type"].startswith("text/event-stream")
        return reply.read()


def parse_frames(raw: bytes) -> list[dict[str, Any]]:
    """Checks the framing byte by byte: every frame is ``event: T\\ndata: {...}\\n\\n``, last ``[DONE]``."""
    text = raw.decode()
    assert text.endswith("data: [DONE]\n\n")
    frames = text.split("\n\n")
    assert frames[-1] == ""
    assert frames[-2] == "data: [DONE]"
    events = []
    for frame in frames[:-2]:
        event_line, data_line = frame.split("\n")
        assert event_line.startswith("event: ") and data_line.startswith("data: ")
        event = json.loads(data_line.removeprefix("data: "))
        assert event_line.removeprefix("event: ") == event["type"]
        events.append(event)
    assert [e["sequence_number"] for e in events] == list(range(len(events)))
    return events


def test_text_stream_has_the_exact_event_sequence(http: httpx.Client) -> None:
    events = parse_frames(stream_raw(http, {"model": "sim", "input": "Reply with: one two three"}))
    types = [e["type"] for e in events]
    assert types == [
        "response.created",
        "response.in_progress",
        "response.output_item.added",
        "response.content_part.added",
        *["response.output_text.delta"] * 3,
        "response.output_text.done",
        "response.content_part.done",
        "response.output_item.done",
        "response.completed",
    ]
    created, in_progress = events[0]["response"], events[1]["response"]
    assert created["status"] == in_progress["status"] == "in_progress" and created["output"] == []
    added = events[2]
    assert added["output_index"] == 0 and added["item"]["status"] == "in_progress" and added["item"]["content"] == []
    item_id = added["item"]["id"]
    for event in events[3:9]:
        assert event["item_id"] == item_id and event["output_index"] == 0 and event["content_index"] == 0
    assert "".join(e["delta"] for e in events[4:7]) == "one two three"
    assert events[7]["text"] == "one two three"
    assert events[8]["part"] == {"type": "output_text", "text": "one two three", "annotations": [], "logprobs": []}
    assert events[9]["item"]["status"] == "completed"
    final = events[-1]["response"]
    assert final["status"] == "completed" and final["output"][0] == events[9]["item"]
    assert final["usage"]["output_tokens"] == 3


def test_every_event_of_an_item_names_where_the_item_ends_up(http: httpx.Client) -> None:
    """The message the answer opens is built ahead, while the model thinks; a model that reasons first
    puts it second, and its events must say so."""
    body = {"model": "o4-mini", "input": "What is 15 * 37?", "reasoning": {"effort": "low", "summary": "auto"}}
    events = parse_frames(stream_raw(http, body))
    output = events[-1]["response"]["output"]
    assert [item["type"] for item in output] == ["reasoning", "message"]
    where = {item["id"]: index for index, item in enumerate(output)}
    placed = [event for event in events if "output_index" in event]
    assert {event["type"] for event in placed} >= {"response.output_item.added", "response.content_part.added",
                                                   "response.output_text.delta"}  # fmt: skip
    for event in placed:
        item_id = event["item"]["id"] if "item" in event else event["item_id"]
        assert event["output_index"] == where[item_id], event


def test_stream_ends_incomplete_at_max_output_tokens(http: httpx.Client, client: openai.OpenAI) -> None:
    events = parse_frames(stream_raw(http, {"model": "sim", "input": "Explain volcanoes", "max_output_tokens": 5}))
    assert [e["type"] for e in events][-2:] == ["response.output_item.done", "response.incomplete"]
    assert sum(e["type"] == "response.output_text.delta" for e in events) == 5
    assert events[-2]["item"]["status"] == "incomplete"
    final = events[-1]["response"]
    assert final["status"] == "incomplete"
    assert final["incomplete_details"] == {"reason": "max_output_tokens"}
    stored = client.responses.retrieve(final["id"])
    assert stored.status == "incomplete" and stored.output[0].status == "incomplete"
    assert stored.incomplete_details is not None and stored.incomplete_details.reason == "max_output_tokens"


def test_function_call_stream_events(http: httpx.Client) -> None:
    body = {"model": "sim", "input": "What is the weather in Paris and Tokyo?", "tools": [WEATHER_TOOL]}
    events = parse_frames(stream_raw(http, body))
    added = [e for e in events if e["type"] == "response.output_item.added"]
    assert [e["output_index"] for e in added] == [0, 1]
    assert all(e["item"]["type"] == "function_call" and e["item"]["arguments"] == "" for e in added)
    for index in (0, 1):
        item_events = [e for e in events if e.get("output_index") == index]
        kinds = [e["type"] for e in item_events]
        assert kinds[0] == "response.output_item.added" and kinds[-1] == "response.output_item.done"
        assert kinds[-2] == "response.function_call_arguments.done"
        assert set(kinds[1:-2]) == {"response.function_call_arguments.delta"}
        deltas = "".join(e["delta"] for e in item_events[1:-2])
        assert deltas == item_events[-2]["arguments"] == item_events[-1]["item"]["arguments"]
        assert item_events[-2]["name"] == "get_weather"
    assert events[-1]["type"] == "response.completed"
    locations = [json.loads(e["item"]["arguments"])["location"] for e in events if e["type"].endswith("item.done")]
    assert locations == ["Paris", "Tokyo"]


def test_sdk_stream_helper_rebuilds_what_retrieve_returns(client: openai.OpenAI) -> None:
    with client.responses.stream(model="sim", input="Tell me about whales", extra_body={"seed": 11}) as stream:
        deltas = [event.delta for event in stream if event.type == "response.output_text.delta"]
        final = stream.get_final_response()
    assert "".join(deltas) == final.output_text
    assert client.responses.retrieve(final.id).model_dump() == without_parsed(final.model_dump())


def test_the_completed_event_carries_what_a_retrieve_returns(http: httpx.Client) -> None:
    """The terminal event's response is encoded from the JSON the store saved: a retrieve gives the same."""
    events = parse_frames(stream_raw(http, {"model": "sim", "input": "Tell me about seals", "stream": True, "seed": 2}))
    completed = events[-1]
    assert completed["type"] == "response.completed" and completed["sequence_number"] == len(events) - 1
    assert completed["response"]["output_text"] and completed["response"]["status"] == "completed"
    assert http.get(f"/v1/responses/{completed['response']['id']}").json() == completed["response"]


def test_sdk_stream_helper_with_tool_calls_matches_retrieve(client: openai.OpenAI) -> None:
    with client.responses.stream(
        model="sim", input="Weather in Oslo please", tools=[WEATHER_TOOL], tool_choice="required"
    ) as stream:
        final = stream.get_final_response()
    assert [item.type for item in final.output] == ["function_call"]
    assert client.responses.retrieve(final.id).model_dump() == without_parsed(final.model_dump())


def test_sdk_iterates_raw_stream_events(client: openai.OpenAI) -> None:
    stream = client.responses.create(model="sim", input="Reply with: hi", stream=True)
    types = [event.type for event in stream]
    assert types[0] == "response.created" and types[-1] == "response.completed"


def test_mid_stream_failure_ends_with_response_failed_and_is_stored_failed(
    http: httpx.Client, client: openai.OpenAI
) -> None:
    raw = stream_raw(http, {"model": "sim", "input": "Explain tides in detail"}, {"x-responsa-fault": "mid_stream"})
    events = parse_frames(raw)
    assert "response.output_text.delta" in [e["type"] for e in events]
    assert events[-2]["type"] == "response.output_item.done" and events[-2]["item"]["status"] == "incomplete"
    failed = events[-1]
    assert failed["type"] == "response.failed"
    assert failed["response"]["status"] == "failed"
    assert failed["response"]["error"]["code"] == "server_error"
    assert failed["response"]["error"]["message"]
    stored = client.responses.retrieve(failed["response"]["id"])
    assert stored.status == "failed" and stored.error is not None and stored.error.code == "server_error"


def test_a_failure_before_the_stream_starts_is_a_plain_http_error(http: httpx.Client) -> None:
    reply = http.post(
        "/v1/responses",
        json={"model": "sim", "input": "hi", "stream": True},
        headers={"x-responsa-fault": "unavailable"},
    )
    assert reply.status_code == 503
    assert reply.json()["error"]["type"] == "service_unavailable"


def http_chunks(server_url: str, body: dict[str, Any]) -> list[bytes]:
    """The chunks of a streamed reply's chunked body, as the server framed them (read off a raw socket)."""
    host, port = server_url.removeprefix("http://").split(":")
    payload = json.dumps(body).encode()
    request = (f"POST /v1/responses HTTP/1.1\r\nhost: {host}\r\ncontent-type: application/json\r\n"
               f"content-length: {len(payload)}\r\nconnection: close\r\n\r\n").encode() + payload  # fmt: skip
    with socket.create_connection((host, int(port)), timeout=30) as conn:
        conn.sendall(request)
        raw = b""
        while received := conn.recv(65536):
            raw += received
    head, _, rest = raw.partition(b"\r\n\r\n")
    assert b"transfer-encoding: chunked" in head.lower()
    chunks = []
    while True:
        size_line, _, rest = rest.partition(b"\r\n")
        size = int(size_line, 16)
        chunks.append(rest[:size])
        assert rest[size : size + 2] == b"\r\n"
        rest = rest[size + 2 :]
        if size == 0:
            assert rest == b""
            return chunks


def test_the_terminal_event_and_done_share_the_last_chunk(server: Any) -> None:
    """The batch that ends a response carries ``[DONE]`` in its own chunk: one write, one segment, not two."""
    chunks = http_chunks(server.url, {"model": "sim", "input": "Tell me about rivers", "stream": True})
    assert chunks[-1] == b"" and chunks[-2].endswith(b"data: [DONE]\n\n")
    assert b"event: response.completed\n" in chunks[-2]
    parse_frames(b"".join(chunks))
