"""``responsa serve --workers 2`` is one server: rate limits exact across its workers without Redis,
one ``/metrics`` counting every worker, a killed worker replaced with nothing acknowledged lost, and
SIGTERM letting a stream in flight finish. (Stored objects across workers: tests/store/test_replicas.py.)
Each client is pinned to one worker (tests/pinned.py), so every check crosses workers for certain."""

from __future__ import annotations

import json
import os
import re
import signal
import socket
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import openai
import pytest

from tests.conftest import start_serve
from tests.pinned import distinct_workers
from tests.prometheus_text import metric

FREE = {"authorization": "Bearer sk-free"}
KEYS = """
[keys.free]
key = "sk-free"

[keys.metered]
key = "sk-metered"
requests_per_minute = 6

[keys.frugal]
key = "sk-frugal"
tokens_per_minute = 20
"""


PROBED = "trafilatura counted: this shadow stands in for it"


def _counting_trafilatura(directory: Path) -> dict[str, str]:
    """An environment whose ``trafilatura`` adds a line to ``directory/probed`` and fails: each probe of
    page extraction is counted (and finds it off, with the shadow's message)."""
    shadow = directory / "shadow"
    shadow.mkdir()
    (shadow / "trafilatura.py").write_text(f"with open({str(directory / 'probed')!r}, 'a') as f:\n    f.write('probed\\n')\n"
                                           f"raise ImportError({PROBED!r})\n")  # fmt: skip
    return _python_path_with(shadow)


def _python_path_with(directory: Path) -> dict[str, str]:
    """The environment's ``PYTHONPATH`` with ``directory`` first (its modules shadow the installed ones)."""
    return {"PYTHONPATH": os.pathsep.join(filter(None, [str(directory), os.environ.get("PYTHONPATH")]))}


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Path]]:
    """The server's URL and its directory."""
    directory = Path(tmp_path_factory.mktemp("workers"))
    (directory / "keys.toml").write_text(KEYS)
    process, url = start_serve("--workers", "2", "--no-embedded", "--db", f"sqlite:///{directory / 'store.db'}",
                               "--keys-file", str(directory / "keys.toml"), "--sim-token-delay-ms", "10",
                               "--cancel-poll-secs", "600", log=directory / "serve.log",
                               env=_counting_trafilatura(directory))  # fmt: skip
    yield url, directory
    process.terminate()
    process.wait(30)


@pytest.fixture(scope="module")
def server(served: tuple[str, Path]) -> str:
    return served[0]


def test_the_parent_probes_the_installation_once_for_every_worker(served: tuple[str, Path]) -> None:
    """Each worker reports what the installation's probes found, probed once by the parent (a worker
    replaced later, as below, takes the same findings), not once per worker."""
    url, directory = served
    with distinct_workers(url, headers=FREE) as places:
        reported = [place.http.get("/server").json()["capabilities"] for place in places]
    assert [found["page_extraction"]["detail"] for found in reported] == [f"ImportError: {PROBED}"] * 2
    assert all(found["code_libraries"]["on"] and found["pdf_text"]["on"] for found in reported)
    assert (directory / "probed").read_text() == "probed\n"


def test_a_request_limit_holds_across_workers(server: str) -> None:
    with distinct_workers(server, headers=FREE) as (one, two):
        a, b = one.openai("sk-metered"), two.openai("sk-metered")
        for client in (a, b) * 3:
            assert client.responses.create(model="sim", input="Reply with: ok").output_text == "ok"
        # Each worker has admitted three: its own buckets would let three more through.
        for client in (a, b):
            with pytest.raises(openai.RateLimitError) as refused:
                client.responses.create(model="sim", input="Reply with: ok")
            assert "requests per minute (6)" in refused.value.message
            assert int(refused.value.response.headers["retry-after"]) >= 1


def test_tokens_spent_on_one_worker_count_on_the_other(server: str) -> None:
    with distinct_workers(server, headers=FREE) as (one, two):
        used = one.openai("sk-frugal").responses.create(model="sim", input="Tell me about rivers").usage
        assert used is not None and used.total_tokens > 20
        with pytest.raises(openai.RateLimitError) as refused:
            two.openai("sk-frugal").responses.create(model="sim", input="Reply with: ok")
    assert "tokens per minute (20)" in refused.value.message


def _served(metrics: str, route: str) -> float:
    return metric(metrics, "responsa_requests_total", method="GET", route=route, status="200")


def test_one_metrics_page_counts_every_worker(server: str) -> None:
    """Each worker publishes what it counted every second; the page sums every worker's."""
    with distinct_workers(server, headers=FREE) as (one, two):
        before = _served(one.http.get(f"{server}/metrics").text, "/v1/files")
        for place, times in ((one, 3), (two, 5)):
            for _ in range(times):
                place.http.get("/files").raise_for_status()
        for place in (one, two):
            deadline = time.monotonic() + 10
            while (seen := _served(place.http.get(f"{server}/metrics").text, "/v1/files")) < before + 8:
                assert time.monotonic() < deadline, f"{seen} of {before + 8}"
                time.sleep(0.1)
            assert seen == before + 8
        assert two.http.get("/server").json()["process"]["workers"] == 2
        assert two.http.get("/server").json()["requests"]["2xx"] >= 8


def _workers_answering(url: str, seconds: float) -> set[str]:
    """The workers that answer fresh connections within ``seconds`` once two distinct ones have."""
    seen: set[str] = set()
    deadline = time.monotonic() + seconds
    while len(seen) < 2 and time.monotonic() < deadline:
        try:
            seen.add(httpx.get(f"{url}/v1/models", headers=FREE).headers["x-responsa-worker"])
        except httpx.TransportError:
            continue
    return seen


def test_a_killed_worker_is_replaced_and_nothing_acknowledged_is_lost(server: str) -> None:
    with distinct_workers(server, headers=FREE) as (one, two):
        made = one.openai("sk-free").responses.create(model="sim", input="Reply with: kept")
        file = two.openai("sk-free").files.create(file=("kept.txt", b"kept"), purpose="user_data")
        for _ in range(4):
            one.http.get("/vector_stores").raise_for_status()
        deadline = time.monotonic() + 10
        while (counted := _served(two.http.get(f"{server}/metrics").text, "/v1/vector_stores")) < 4:
            assert time.monotonic() < deadline, "the worker's counts were not published"
            time.sleep(0.1)
        killed = one.worker
        assert killed is not None
        os.kill(int(killed), signal.SIGKILL)
        assert two.openai("sk-free").responses.retrieve(made.id).output_text == "kept"
    answering = _workers_answering(server, 60)
    assert len(answering) == 2 and killed not in answering, answering
    with openai.OpenAI(base_url=f"{server}/v1", api_key="sk-free", max_retries=0) as client:
        assert client.responses.retrieve(made.id).output_text == "kept"
        assert client.files.content(file.id).read() == b"kept"
    # What the killed worker counted stays in the sums.
    assert _served(httpx.get(f"{server}/metrics").text, "/v1/vector_stores") >= counted


def test_sigterm_lets_a_stream_in_flight_finish(tmp_path: Path) -> None:
    process, url = start_serve("--workers", "2", "--no-embedded", "--db", f"sqlite:///{tmp_path / 'store.db'}",
                               "--sim-token-delay-ms", "20", log=tmp_path / "serve.log")  # fmt: skip
    try:
        words = " ".join(f"word{n}" for n in range(40))
        events: list[dict[str, Any]] = []
        body = {"model": "sim", "input": f"Reply with: {words}", "stream": True}
        with httpx.stream("POST", f"{url}/v1/responses", json=body, timeout=60) as reply:
            for line in reply.iter_lines():
                if not line.startswith("data: {"):
                    continue
                events.append(json.loads(line[6:]))
                if len(events) == 3:
                    process.send_signal(signal.SIGTERM)
        # It ran to its own end, every word of it, not to the server's.
        assert events[-1]["type"] == "response.completed"
        assert events[-1]["response"]["output"][0]["content"][0]["text"] == words
        assert process.wait(30) == 0
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()


def test_a_websocket_keeps_its_store_false_chain_on_its_worker(server: str) -> None:
    """A connection stays on the worker that took it, with the responses it did not store: each of
    several connections (the kernel spreads them over the workers) continues its own chain."""
    with openai.OpenAI(base_url=f"{server}/v1", api_key="sk-free", max_retries=0) as client:
        for name in ("Ada", "Grace", "Hedy", "Radia"):
            with client.beta.responses.connect() as connection:
                ends = []
                for text, previous in ((f"My name is {name}.", None), ("What is my name?", "first")):
                    extra = {"previous_response_id": ends[-1].id} if previous else {}
                    connection.send({"type": "response.create", "model": "sim", "input": text, "store": False,  # type: ignore[arg-type,typeddict-item]
                                     **extra})  # fmt: skip
                    for event in connection:
                        if event.type in ("response.completed", "response.failed", "error"):
                            assert event.type == "response.completed", event
                            ends.append(event.response)
                            break
                assert ends[1].previous_response_id == ends[0].id
                assert ends[1].usage.input_tokens > ends[0].usage.input_tokens


def test_a_burst_of_connections_is_spread_over_the_workers(server: str) -> None:
    """Forty connections opened at once, before any request: each worker takes a fair share (a worker
    draining one shared socket would take them all, and keep-alive would keep them there)."""
    host, port = server.removeprefix("http://").split(":")
    burst = [socket.create_connection((host, int(port))) for _ in range(40)]
    try:
        served: dict[str, int] = {}
        for connection in burst:
            connection.sendall(b"GET /v1/models HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer sk-free\r\n\r\n")
            head = b""
            while b"\r\n\r\n" not in head:
                head += connection.recv(65536)
            worker = re.search(rb"x-responsa-worker: (\d+)", head)
            assert worker is not None, head
            served[worker.group(1).decode()] = served.get(worker.group(1).decode(), 0) + 1
    finally:
        for connection in burst:
            connection.close()
    assert len(served) == 2 and min(served.values()) >= 5, served


def test_a_cancel_taken_by_another_worker_is_passed_to_the_one_running_it(server: str) -> None:
    """This server reads the store's count of cancels every 600 s: the cancel reaches the worker running
    the response only because the worker that took it tells its neighbours. (Had it not, the cancel
    would answer after a lease, 15 s, with the output still as it was when last stored.) The killed
    worker of the test above left its socket behind: telling it is skipped."""
    with distinct_workers(server, headers=FREE) as (one, two):
        started = one.openai("sk-free").responses.create(
            model="sim", input="Write at length about the history of navigation", background=True,
            max_output_tokens=3000,
        )  # fmt: skip
        with one.another() as watcher, watcher.http.stream("GET", f"/responses/{started.id}", headers=FREE,
                                                          params={"stream": "true"}) as reply:  # fmt: skip
            next(line for line in reply.iter_lines() if '"response.output_text.delta"' in line)
        cancelled = two.openai("sk-free").responses.cancel(started.id, timeout=10)
        assert cancelled.status == "cancelled"
        assert cancelled.output[0].status == "incomplete"


def test_workers_slow_to_start_are_not_taken_for_hung_ones(tmp_path: Path) -> None:
    """Each worker takes 8 s before it can answer the parent's health check (as a worker importing
    under load on a small machine did): the parent waits for them rather than killing them as hung and
    starting them again, which with uvicorn's 5 s check it did for ever. At the default log level each
    request has its access line."""
    slow = tmp_path / "slow"
    slow.mkdir()
    (slow / "sitecustomize.py").write_text(  # only in the workers: multiprocessing's spawned children
        "import sys, time\nif '--multiprocessing-fork' in sys.argv:\n    time.sleep(8)\n"
    )
    log = tmp_path / "serve.log"
    process, url = start_serve("--workers", "2", "--no-embedded", "--db", f"sqlite:///{tmp_path / 'store.db'}",
                               log=log, env=_python_path_with(slow))  # fmt: skip
    try:
        httpx.get(f"{url}/v1/models", headers={"x-request-id": "req_slowstart"}).raise_for_status()
    finally:
        process.terminate()
        process.wait(30)
    text = log.read_text()
    assert "died" not in text
    assert re.search(r"request_id=req_slowstart tenant=\S+ method=GET path=/v1/models status=200", text), text
