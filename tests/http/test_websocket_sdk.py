"""Lanes and steering through the openai SDK's own WebSocket client (``client.responses.connect()``,
openai 3.57): ``response.create`` with ``stream_id`` on two lanes, and ``response.steer`` on a
running response, the server's events parsed into the SDK's types."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import openai
import pytest

from tests.conftest import LiveServer, profiled_server

SLOW = "[models.slowpoke]\nttft_ms = 100\ntokens_per_second = 20\n"
LONG = "Reply with: " + " ".join(f"word{index}" for index in range(40))
ENDS = {"response.completed", "response.incomplete", "response.failed", "error"}


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveServer]:
    yield from profiled_server(tmp_path_factory, "sdk-socket", SLOW, embedded=False)


def until_ends(connection: Any, count: int) -> list[Any]:
    events = []
    for event in connection:
        events.append(event)
        count -= event.type in ENDS
        if not count:
            return events
    return events


def kinds_of(events: list[Any]) -> list[str]:
    return [event.type for event in events]


def test_two_lanes_through_the_sdk(server: LiveServer) -> None:
    with openai.OpenAI(base_url=server.v1, api_key="-", max_retries=0) as client:
        with client.responses.connect() as connection:
            connection.response.create(model="slowpoke", input="Reply with: left", stream_id="left")
            connection.response.create(model="slowpoke", input="Reply with: right", stream_id="right")
            events = until_ends(connection, 2)
    ends = {event.stream_id: event.response for event in events if event.type == "response.completed"}  # type: ignore[union-attr]
    assert {lane: response.output_text for lane, response in ends.items()} == {"left": "left", "right": "right"}


def test_steering_through_the_sdk(server: LiveServer) -> None:
    with openai.OpenAI(base_url=server.v1, api_key="-", max_retries=0) as client:
        with client.responses.connect() as connection:
            connection.response.create(model="slowpoke", input=LONG)
            events: list[Any] = []
            for event in connection:
                events.append(event)
                if event.type == "response.output_text.delta" and "response.output_text.delta" not in kinds_of(
                    events[:-1]
                ):
                    connection.response.steer(previous_response_id=events[0].response.id, input="Say hello.")
                if event.type == "response.completed":
                    break
    kinds = kinds_of(events)
    assert kinds.count("response.steer.accepted") == 1 and "response.incomplete" in kinds
    steered = next(event.response for event in events if event.type == "response.incomplete")
    assert steered.incomplete_details is not None and steered.incomplete_details.reason == "steered"
    successor = events[-1].response
    assert successor.previous_response_id == steered.id and successor.status == "completed"
