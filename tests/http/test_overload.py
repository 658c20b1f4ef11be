"""Overload is visible and fair: a backend runs at most ``--max-generations`` at once, the next
``--max-queued-generations`` requests wait (first come first served within a tenant, tenants in
turn) for ``--max-queue-wait-secs`` at most, and past them a request gets 429 with ``retry-after``
before any byte; the embedded model runs one generation at a time behind the same line."""

from __future__ import annotations

import gc
import json
import socket
import time
from collections.abc import Iterator

import httpx
import openai
import pytest

from responsa.backends.llama_cpp import DEFAULT_MODEL_NAME
from responsa.config import ApiKey
from tests.conftest import LiveServer, StreamReader, sqlite_server
from tests.prometheus_text import samples


@pytest.fixture(scope="module")
def capped(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveServer]:
    yield from sqlite_server(
        tmp_path_factory,
        "capped",
        max_generations=2,
        max_queued_generations=2,
        sim_token_delay_ms=30,
        max_queue_wait_secs=60,
    )  # a stream takes ~2 s: the slots stay taken while a test fills the line, even on a loaded machine


IN_LINE: dict[str, str] = {"name": "responsa_generations_waiting"}
"""Requests in line for a slot."""
HELD: dict[str, str] = {"name": "responsa_generations", "admitted": "line"}
"""Slots held by requests that took the line."""


def gauge(server: LiveServer, sample: dict[str, str]) -> int:
    """One sample of ``/metrics`` now (there must be exactly one)."""
    [value] = samples(httpx.get(f"{server.url}/metrics").text, **sample)
    return int(value)


def wait_for_line(server: LiveServer, count: int, sample: dict[str, str] = IN_LINE, seconds: float = 10) -> None:
    """Until the gauge reads ``count`` (``count`` requests in line: the order of arrival is settled)."""
    deadline = time.monotonic() + seconds
    while (now := gauge(server, sample)) != count:
        assert time.monotonic() < deadline, f"{sample} is {now}, not {count}"
        time.sleep(0.02)


def _overloaded(server: LiveServer, model: str) -> openai.RateLimitError:
    with openai.OpenAI(base_url=server.v1, api_key="unused", max_retries=0) as client:
        started = time.monotonic()
        with pytest.raises(openai.RateLimitError) as refused:
            client.responses.create(model=model, input="One more, please")
        assert time.monotonic() - started < 1.0  # refused at once, not after waiting
    return refused.value


def test_past_the_cap_and_the_line_a_request_is_refused_and_the_line_is_served_in_order(capped: LiveServer) -> None:
    body = {"model": "sim", "input": "Tell me about rivers", "stream": True}
    running = [StreamReader(f"{capped.v1}/responses", body, after=1) for _ in range(2)]
    for stream in running:
        assert stream.ready.wait(10)
    waiting = []
    for count in (1, 2):
        waiting.append(StreamReader(f"{capped.v1}/responses", body, after=1))
        wait_for_line(capped, count)  # so that they arrive in this order
    assert not any(stream.ready.is_set() for stream in waiting)  # in line, not generating

    error = _overloaded(capped, "sim")
    assert error.code == "server_overloaded"
    assert error.response.headers["retry-after"] == "1"
    assert error.body["type"] == "rate_limit_error"  # type: ignore[index]

    for stream in [*running, *waiting]:
        assert stream.join(30)
        assert stream.status == 200 and stream.events[-1]["type"] == "response.completed"
    first, second = (stream.first_at for stream in waiting)
    assert first is not None and second is not None and first < second  # first come, first served
    ended = min(stream.events[-1]["response"]["completed_at"] for stream in running)
    assert waiting[0].events[0]["response"]["created_at"] >= ended - 1  # it started when a slot freed


def test_the_embedded_model_runs_its_slots_and_lines_up_the_rest(tmp_path_factory: pytest.TempPathFactory) -> None:
    for server in sqlite_server(tmp_path_factory, "embedded_cap", max_queued_generations=1, parallel=2, threads=1,
                                max_queue_wait_secs=120):  # fmt: skip
        body = {"model": DEFAULT_MODEL_NAME, "input": "Count to fifty", "stream": True,
                "max_output_tokens": 96, "ignore_eos": True}  # fmt: skip
        running = [StreamReader(f"{server.v1}/responses", body, after=1) for _ in range(2)]  # one a slot
        for stream in running:
            assert stream.ready.wait(60)
        waiting = StreamReader(f"{server.v1}/responses", body, after=1)
        wait_for_line(server, 1)
        assert _overloaded(server, DEFAULT_MODEL_NAME).code == "server_overloaded"
        for stream in (*running, waiting):
            assert stream.join(60)
            assert stream.events[-1]["type"] in ("response.completed", "response.incomplete")
        # (incomplete responses have no completed_at: their end is in their timeline)
        ended = min(_ended_at(server, stream.events[-1]["response"]["id"]) for stream in running)
        assert ended <= waiting.events[0]["response"]["created_at"] + 1  # it started when a slot freed


def _ended_at(server: LiveServer, response_id: str) -> float:
    marks = httpx.get(f"{server.v1}/responses/{response_id}/timeline", timeout=10).json()["marks"]
    return next(mark["at"] for mark in marks if mark["event"] == "response.ended")


@pytest.fixture
def no_cyclic_gc() -> Iterator[None]:
    """The garbage collector would finalize an abandoned run's context managers sooner or later (the
    server runs in this process): off, a slot comes back only if the server gives it back itself."""
    gc.disable()
    try:
        yield
    finally:
        gc.enable()


def test_a_client_that_leaves_while_in_line_gives_its_turn_back(capped: LiveServer, no_cyclic_gc: None) -> None:
    body = {"model": "sim", "input": "Tell me about rivers", "stream": True}
    running = [StreamReader(f"{capped.v1}/responses", body, after=1) for _ in range(2)]
    for stream in running:
        assert stream.ready.wait(10)
    host, port = capped.url.removeprefix("http://").split(":")
    payload = json.dumps(body).encode()
    with socket.create_connection((host, int(port))) as leaver:  # in line, then gone before its turn
        leaver.sendall(b"POST /v1/responses HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\n"
                       b"content-length: %d\r\n\r\n%s" % (len(payload), payload))  # fmt: skip
        wait_for_line(capped, 1)
    for stream in running:
        assert stream.join(30)
    wait_for_line(capped, 0)  # the leaver's turn came
    wait_for_line(capped, 0, HELD)  # and went: its slot is free again
    # Every slot and place in line is free again: as many streams as the cap and the line hold are all served.
    burst = [StreamReader(f"{capped.v1}/responses", body, after=1) for _ in range(4)]
    for stream in burst:
        assert stream.join(30)
    assert [stream.status for stream in burst] == [200] * 4


SLOW = {"model": "sim", "input": "Tell me about rivers", "stream": True, "max_output_tokens": 12}
"""About 1.2 s at 100 ms a token."""


def test_a_request_that_cannot_start_within_its_wait_is_refused_before_any_byte(
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    for server in sqlite_server(tmp_path_factory, "deadline", max_generations=1, max_queued_generations=4,
                                max_queue_wait_secs=0.4, sim_token_delay_ms=100):  # fmt: skip
        running = StreamReader(f"{server.v1}/responses", {**SLOW, "max_output_tokens": 40}, after=1)
        assert running.ready.wait(10)
        with openai.OpenAI(base_url=server.v1, api_key="unused", max_retries=0) as client:
            started = time.monotonic()
            with pytest.raises(openai.RateLimitError) as refused:
                client.responses.create(model="sim", input="One more, please")
            waited = time.monotonic() - started
        assert 0.35 <= waited < 2.0  # it waited its turn, then learned at once that none came
        assert refused.value.code == "server_overloaded" and "none free within 0.4s" in refused.value.message
        assert refused.value.response.headers["retry-after"] == "1"
        assert running.join(30) and running.events[-1]["type"] in ("response.completed", "response.incomplete")


def test_tenants_take_turns_and_one_cannot_fill_the_line(tmp_path_factory: pytest.TempPathFactory) -> None:
    keys = (ApiKey("alpha-key", "alpha"), ApiKey("beta-key", "beta"))
    for server in sqlite_server(tmp_path_factory, "fair", api_keys=keys, max_generations=1, max_queued_generations=2,
                                max_queue_wait_secs=60, sim_token_delay_ms=100):  # fmt: skip
        url = f"{server.v1}/responses"
        alpha, beta = ({"authorization": f"Bearer {key.key}"} for key in keys)
        # ~4 s, so that the slot stays taken while the line fills even on a loaded machine (CI once saw
        # the line's order or the slot change within a 1.2 s stream)
        running = StreamReader(url, {**SLOW, "max_output_tokens": 40}, after=1, headers=alpha)
        assert running.ready.wait(10)
        waiting = []
        for count in (1, 2):  # alpha fills the line, oldest first
            waiting.append(StreamReader(url, SLOW, after=1, headers=alpha))
            wait_for_line(server, count)
        late = StreamReader(url, SLOW, after=1, headers=beta)  # the line is full, but beta has no one in it
        assert waiting[1].join(5) and waiting[1].status == 429  # alpha's newest gave its place up
        assert json.loads(waiting[1].body)["error"]["code"] == "server_overloaded"
        for stream in (running, waiting[0], late):
            assert stream.join(30) and stream.status == 200
            assert stream.events[-1]["type"] in ("response.completed", "response.incomplete")
        assert waiting[0].first_at is not None and late.first_at is not None
        assert waiting[0].first_at < late.first_at  # alpha's turn came first: it was in line first
