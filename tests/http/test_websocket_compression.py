"""Per-message compression: declined by default (deflating every event cost about a quarter of the
server's CPU per WebSocket response), agreed with ``--ws-compression``; a response streams whole
either way, its events written a batch at a time (``serve/_websocket_batches.py``)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest
from websockets.extensions.permessage_deflate import PerMessageDeflate
from websockets.sync.client import connect

from tests.conftest import LiveServer, sqlite_server


@pytest.fixture(scope="module", params=[False, True], ids=["default", "ws-compression"])
def server(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveServer]:
    yield from sqlite_server(tmp_path_factory, f"compression-{request.param}", ws_compression=request.param)


def streamed(server: LiveServer, **body: Any) -> tuple[list[dict[str, Any]], dict[str, Any], bool]:
    """A ``response.create`` of ``body`` on a new connection that offers compression, as the SDKs'
    clients do: the events before ``response.completed``, that event, and whether compression was agreed."""
    url = server.v1.replace("http://", "ws://") + "/responses"
    with connect(url, compression="deflate", max_size=None) as socket:
        agreed = any(isinstance(extension, PerMessageDeflate) for extension in socket.protocol.extensions)
        socket.send(json.dumps({"type": "response.create", "model": "sim", "input": "Tell me about rivers", **body}))
        events = []
        while (event := json.loads(socket.recv(timeout=30)))["type"] != "response.completed":
            events.append(event)
    return events, event, agreed


def test_compression_is_agreed_only_when_asked_and_a_response_streams_whole(server: LiveServer) -> None:
    events, event, agreed = streamed(server)
    assert agreed is server.settings.ws_compression
    deltas = "".join(event["delta"] for event in events if event["type"] == "response.output_text.delta")
    assert deltas and deltas == event["response"]["output"][0]["content"][0]["text"]
    assert [event["sequence_number"] for event in events] == list(range(len(events)))


@pytest.mark.parametrize("size", [40, 300, 70_000], ids=["short", "medium", "long"])
@pytest.mark.parametrize("lane", [None, "lane.2"], ids=["default-lane", "named-lane"])
def test_messages_of_every_frame_length_arrive_whole(server: LiveServer, size: int, lane: str | None) -> None:
    """A message under 126 bytes, one under 64 KiB and one over have each their own frame header (written
    by the server itself where nothing was agreed, by the library where compression was); the sizes are
    counted in UTF-8 bytes, which two- and three-byte characters make more than the characters."""
    instructions = ("é€ " * size)[:size]
    events, event, _agreed = streamed(server, instructions=instructions, store=False,
                                      **({"stream_id": lane} if lane else {}))  # fmt: skip
    assert events[0]["type"] == "response.created" and events[0]["response"]["instructions"] == instructions
    assert event["response"]["instructions"] == instructions
    assert {each.get("stream_id") for each in [*events, event]} == {lane}
    assert [each["sequence_number"] for each in events] == list(range(len(events)))
