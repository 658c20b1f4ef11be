"""Stopping a response while it generates: by ``POST …/cancel`` and by the client going away."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from responsa.config import Settings
from tests.backends.mock_upstream import MockUpstream, Stream, text_chunks
from tests.conftest import LiveServer, StreamReader, serve, serve_app

LONG = {"model": "sim", "input": "Write at length about the history of navigation", "stream": True}


@pytest.fixture(scope="module")
def slow(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveServer]:
    db = tmp_path_factory.mktemp("slow") / "responsa.db"
    with serve(Settings(db_url=f"sqlite:///{db}", sim_token_delay_ms=50)) as live:
        yield live


def wait_for_status(http: httpx.Client, response_id: str, status: str, seconds: float = 10) -> dict[str, object]:
    deadline = time.monotonic() + seconds
    while True:
        body = http.get(f"/v1/responses/{response_id}").json()
        if body.get("status") == status or time.monotonic() > deadline:
            return dict(body)
        time.sleep(0.02)


def test_cancel_stops_a_streaming_response(slow: LiveServer) -> None:
    reader = StreamReader(f"{slow.v1}/responses", LONG, after=6)
    assert reader.ready.wait(10)
    events = reader.events
    response_id = events[0]["response"]["id"]
    with httpx.Client(base_url=slow.url) as http:
        assert http.get(f"/v1/responses/{response_id}").json()["status"] == "in_progress"
        chained = http.post("/v1/responses", json={"model": "sim", "input": "hi", "previous_response_id": response_id})
        assert chained.status_code == 409
        assert chained.json()["error"]["code"] == "previous_response_in_progress"
        cancelled = http.post(f"/v1/responses/{response_id}/cancel")
        assert cancelled.status_code == 200 and cancelled.json()["status"] == "cancelled"
        assert reader.join(10)
        assert events[-1]["type"] == "response.output_item.done"
        assert events[-1]["item"]["status"] == "incomplete"
        stored = http.get(f"/v1/responses/{response_id}").json()
        assert stored["status"] == "cancelled"
        assert stored["output"][0]["status"] == "incomplete"
        deltas = "".join(str(e["delta"]) for e in events if e["type"] == "response.output_text.delta")
        assert stored["output"][0]["content"][0]["text"] == deltas
        # Cancelling again is harmless.
        assert http.post(f"/v1/responses/{response_id}/cancel").json()["status"] == "cancelled"


def test_client_disconnect_stops_generation(slow: LiveServer) -> None:
    with httpx.Client(base_url=slow.url, timeout=30) as http:
        with http.stream("POST", "/v1/responses", json=LONG) as reply:
            lines = reply.iter_lines()
            first = next(line for line in lines if line.startswith("data: "))
            response_id = json.loads(first[6:])["response"]["id"]
            for _ in range(8):
                next(lines)
        stored = wait_for_status(http, response_id, "cancelled")
        assert stored["status"] == "cancelled"


def test_a_cancel_lands_while_the_model_is_silent(tmp_path: Path) -> None:
    """An upstream that says nothing for a minute: the cancel does not wait for its next word (it used
    to wait as long as the model was silent); the upstream request is dropped."""
    upstream = MockUpstream(models=("quiet",))
    upstream.script.append(Stream(text_chunks("never", " said"), delay=60))
    with serve_app(upstream.app) as mock:
        settings = Settings(db_url=f"sqlite:///{tmp_path / 'r.db'}", embedded=False, upstreams=(f"{mock.url}/v1",))
        with serve(settings) as live, httpx.Client(base_url=live.url, timeout=20) as http:
            reader = StreamReader(f"{live.v1}/responses", {"model": "quiet", "input": "hi", "stream": True}, after=1)
            assert reader.ready.wait(10)
            response_id = reader.events[0]["response"]["id"]
            while not upstream.requests:
                time.sleep(0.01)
            cancelled = http.post(f"/v1/responses/{response_id}/cancel")
            assert cancelled.status_code == 200 and cancelled.json()["status"] == "cancelled"
            assert reader.join(10)  # the stream ended too, with nothing the model never said
            assert [event["type"] for event in reader.events] == ["response.created", "response.in_progress"]
            assert http.get(f"/v1/responses/{response_id}").json()["status"] == "cancelled"
            # The server goes on serving; the next response is not held up by the dropped one.
            upstream.script.append(Stream(text_chunks("fine")))
            after = http.post("/v1/responses", json={"model": "quiet", "input": "hi"}).json()
            assert after["status"] == "completed" and after["output_text"] == "fine"
