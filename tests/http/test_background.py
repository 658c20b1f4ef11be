"""Background responses: polling, cancelling, resuming streams (in-process and from another process),
and what a stop or a crash of the server leaves behind."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import openai
import pytest

from responsa.config import Settings
from tests.conftest import LiveServer, free_port, serve, wait_until_answering

LONG = "Write at length about the history of navigation and the stars"


@pytest.fixture(scope="module")
def paced_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("bg") / "bg.db"


@pytest.fixture(scope="module")
def paced(paced_db: Path) -> Iterator[LiveServer]:
    with serve(Settings(db_url=f"sqlite:///{paced_db}", sim_token_delay_ms=15, embedded=False)) as live:
        yield live


def events_of(url: str, params: dict[str, str] | None = None, limit: int | None = None) -> list[dict[str, Any]]:
    """Read SSE ``data`` objects from a GET stream, stopping after ``limit`` events (a disconnect)."""
    seen: list[dict[str, Any]] = []
    with httpx.stream("GET", url, params=params, timeout=60) as reply:
        assert reply.status_code == 200, reply.read()
        for line in reply.iter_lines():
            if line.startswith("data: {"):
                seen.append(json.loads(line[6:]))
                if limit is not None and len(seen) >= limit:
                    break
    return seen


def wait_status(sdk: openai.OpenAI, response_id: str, wanted: set[str], seconds: float = 30) -> Any:
    deadline = time.monotonic() + seconds
    while True:
        response = sdk.responses.retrieve(response_id)
        if response.status in wanted:
            return response
        assert time.monotonic() < deadline, f"still {response.status}"
        time.sleep(0.02)


def test_poll_until_done(paced: LiveServer) -> None:
    with openai.OpenAI(base_url=paced.v1, api_key="x", max_retries=0) as sdk:
        queued = sdk.responses.create(model="sim", input="Tell me about tides", background=True, extra_body={"seed": 2})
        assert queued.status == "queued" and queued.background is True and queued.output == []
        seen = [queued.status]
        while seen[-1] not in ("completed", "failed", "incomplete", "cancelled"):
            status = sdk.responses.retrieve(queued.id).status
            if status != seen[-1]:
                seen.append(status)
            time.sleep(0.01)
        assert seen == ["queued", "in_progress", "completed"] or seen == ["queued", "completed"]
        done = sdk.responses.retrieve(queued.id)
        assert "tides" in done.output_text and done.usage is not None


def test_background_stream_has_queued_and_resumes_exactly(paced: LiveServer) -> None:
    with httpx.stream("POST", f"{paced.v1}/responses", json={"model": "sim", "input": LONG, "background": True,
                                                             "stream": True, "seed": 5}, timeout=60) as reply:  # fmt: skip
        first = [json.loads(line[6:]) for line, _ in zip(
            (line for line in reply.iter_lines() if line.startswith("data: {")), range(6), strict=False)]  # fmt: skip
    assert [e["type"] for e in first[:3]] == ["response.created", "response.queued", "response.in_progress"]
    assert first[0]["response"]["status"] == "queued" and first[2]["response"]["status"] == "in_progress"
    response_id = first[0]["response"]["id"]
    url = f"{paced.v1}/responses/{response_id}"
    # Resume at several points, each while the response is still generating, from where we stopped.
    collected = list(first)
    for step in (4, 9):
        more = events_of(url, {"stream": "true", "starting_after": str(collected[-1]["sequence_number"])}, limit=step)
        collected += more
    collected += events_of(url, {"stream": "true", "starting_after": str(collected[-1]["sequence_number"])})
    assert [e["sequence_number"] for e in collected] == list(range(len(collected)))
    assert collected[-1]["type"] == "response.completed"
    # A replay from the start, after the end (read back from the store), is the same stream.
    full = events_of(url, {"stream": "true"})
    assert full == collected
    text = "".join(e["delta"] for e in full if e["type"] == "response.output_text.delta")
    assert text == collected[-1]["response"]["output"][0]["content"][0]["text"]


def test_sdk_background_stream_and_resume_frames(paced: LiveServer) -> None:
    with openai.OpenAI(base_url=paced.v1, api_key="x", max_retries=0) as sdk:
        stream = sdk.responses.create(model="sim", input="Reply with: alpha beta", background=True, stream=True)
        types = [event.type for event in stream]
    assert types[:3] == ["response.created", "response.queued", "response.in_progress"]
    assert types[-1] == "response.completed"


def test_resume_from_another_process_sharing_the_store(paced: LiveServer, paced_db: Path, tmp_path: Path) -> None:
    started = httpx.post(f"{paced.v1}/responses", json={"model": "sim", "input": LONG, "background": True}).json()
    port = free_port()
    env = {**os.environ, "RESPONSA_PORT": str(port), "RESPONSA_DB": f"sqlite:///{paced_db}", "RESPONSA_EMBEDDED": "0"}
    other = subprocess.Popen([sys.executable, "-m", "responsa.cli", "serve"], env=env, stdout=subprocess.DEVNULL,
                             stderr=subprocess.DEVNULL)  # fmt: skip
    try:
        wait_until_answering(f"http://127.0.0.1:{port}/health", other)
        elsewhere = events_of(
            f"http://127.0.0.1:{port}/v1/responses/{started['id']}", {"stream": "true", "starting_after": "2"}
        )
    finally:
        other.terminate()
        other.wait(15)
    assert [e["sequence_number"] for e in elsewhere] == list(range(3, 3 + len(elsewhere)))
    assert elsewhere[-1]["type"] == "response.completed"
    here = events_of(f"{paced.v1}/responses/{started['id']}", {"stream": "true", "starting_after": "2"})
    assert here == elsewhere


def test_cancel_stops_a_background_response(paced: LiveServer) -> None:
    with openai.OpenAI(base_url=paced.v1, api_key="x", max_retries=0) as sdk:
        queued = sdk.responses.create(model="sim", input=LONG, background=True, max_output_tokens=2000)
        wait_status(sdk, queued.id, {"in_progress"})
        seen = events_of(f"{paced.v1}/responses/{queued.id}", {"stream": "true"}, limit=6)
        assert seen[-1]["type"] == "response.output_text.delta"  # answering now: the cancel cuts it mid-answer
        cancelled = sdk.responses.cancel(queued.id)
        assert cancelled.status == "cancelled"
        stored = sdk.responses.retrieve(queued.id)
        assert stored.status == "cancelled" and stored.output[0].status == "incomplete"
        assert 0 < len(stored.output_text) and stored.usage is None
        assert sdk.responses.cancel(queued.id).status == "cancelled"  # idempotent
        replayed = events_of(f"{paced.v1}/responses/{queued.id}", {"stream": "true"})
        assert replayed[-1]["type"] == "response.output_item.done"


def test_streaming_a_foreground_response_again_is_a_400(paced: LiveServer) -> None:
    done = httpx.post(f"{paced.v1}/responses", json={"model": "sim", "input": "Reply with: x"}).json()
    reply = httpx.get(f"{paced.v1}/responses/{done['id']}", params={"stream": "true"})
    assert reply.status_code == 400 and reply.json()["error"]["param"] == "stream"
    bad = httpx.get(f"{paced.v1}/responses/{done['id']}", params={"stream": "true", "starting_after": "x"})
    assert bad.status_code == 400 and bad.json()["error"]["param"] == "starting_after"


def start_process(db: Path, *extra: str) -> tuple[subprocess.Popen[bytes], str]:
    port = free_port()
    command = [sys.executable, "-m", "responsa.cli", "serve", "--port", str(port), "--db", f"sqlite:///{db}",
               "--no-embedded", "--sim-token-delay-ms", "30", *extra]  # fmt: skip
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    wait_until_answering(f"http://127.0.0.1:{port}/health", process)
    return process, f"http://127.0.0.1:{port}/v1"


def test_sigterm_drains_then_fails_what_is_left(tmp_path: Path) -> None:
    db = tmp_path / "term.db"
    process, url = start_process(db, "--shutdown-grace-secs", "1")
    short = httpx.post(
        f"{url}/responses", json={"model": "sim", "input": "Reply with: quick", "background": True}
    ).json()
    long = httpx.post(f"{url}/responses", json={"model": "sim", "input": LONG, "background": True,
                                                 "max_output_tokens": 3000}).json()  # fmt: skip
    with openai.OpenAI(base_url=url, api_key="x", max_retries=0) as sdk:
        wait_status(sdk, short["id"], {"completed"})
        wait_status(sdk, long["id"], {"in_progress"})
    process.send_signal(signal.SIGTERM)
    process.wait(30)  # uvicorn shuts down gracefully, then re-raises the signal (exit status -15)
    process, url = start_process(db)
    try:
        assert httpx.get(f"{url}/responses/{short['id']}").json()["status"] == "completed"
        cut = httpx.get(f"{url}/responses/{long['id']}").json()
        assert cut["status"] == "failed" and cut["error"]["code"] == "server_shutdown"
        assert events_of(f"{url}/responses/{long['id']}", {"stream": "true"})[-1]["type"] == "response.failed"
    finally:
        process.terminate()
        process.wait(15)


def test_a_killed_server_leaves_failed_responses_not_lost_ones(tmp_path: Path) -> None:
    db = tmp_path / "kill.db"
    process, url = start_process(db, "--background-lease-secs", "0.5")
    started = httpx.post(f"{url}/responses", json={"model": "sim", "input": LONG, "background": True,
                                                    "max_output_tokens": 3000}).json()  # fmt: skip
    with openai.OpenAI(base_url=url, api_key="x", max_retries=0) as sdk:
        wait_status(sdk, started["id"], {"in_progress"})
    process.kill()
    process.wait(15)
    process, url = start_process(db, "--background-lease-secs", "0.5")
    try:
        deadline = time.monotonic() + 15
        while (found := httpx.get(f"{url}/responses/{started['id']}").json())["status"] != "failed":
            assert time.monotonic() < deadline, found["status"]
            time.sleep(0.05)
        assert found["error"]["code"] == "server_restarted" and "not resumed" in found["error"]["message"]
        replay = events_of(f"{url}/responses/{started['id']}", {"stream": "true"})
        assert replay[-1]["type"] == "response.failed"
        assert [e["sequence_number"] for e in replay] == list(range(len(replay)))
    finally:
        process.terminate()
        process.wait(15)


def test_a_background_turn_joins_its_conversation(paced: LiveServer) -> None:
    with openai.OpenAI(base_url=paced.v1, api_key="x", max_retries=0) as sdk:
        conversation = sdk.conversations.create()
        queued = sdk.responses.create(
            model="sim", input="Reply with: done in the background", conversation=conversation.id, background=True
        )
        wait_status(sdk, queued.id, {"completed"})
        items = sdk.conversations.items.list(conversation.id, order="asc").data
        assert [(item.role, item.content[0].text) for item in items] == [  # type: ignore[union-attr]
            ("user", "Reply with: done in the background"),
            ("assistant", "done in the background"),
        ]
