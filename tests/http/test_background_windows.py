"""``background_options.completion_window``: background work with a later window waits apart, behind
interactive requests and sooner windows, ``queued`` until its turn; ``continuation_id`` puts a
follow-up first in its window; a cancel ends the wait at once."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from typing import Any

import httpx
import openai
import pytest

from tests.conftest import LiveServer, sqlite_server


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveServer]:
    # One generation at a time, with the simulated models' latency: work waits its turn.
    yield from sqlite_server(tmp_path_factory, "windows", max_generations=1, sim_latency=True, max_queue_wait_secs=30)


class Holder:
    """A streamed response that holds the only slot until it ends (it has it once it has begun)."""

    def __init__(self, server: LiveServer) -> None:
        self.begun = threading.Event()
        body = {"model": "o4-mini", "input": "Tell me a long story.", "stream": True, "max_output_tokens": 300,
                "reasoning": {"effort": "none"}}  # fmt: skip
        self.thread = threading.Thread(target=self._read, args=(server, body))
        self.thread.start()
        assert self.begun.wait(30)

    def _read(self, server: LiveServer, body: dict[str, Any]) -> None:
        with httpx.stream("POST", f"{server.v1}/responses", json=body, timeout=60) as reply:
            for _ in reply.iter_lines():
                self.begun.set()


def started_at(server: LiveServer, response_id: str) -> float:
    marks = httpx.get(f"{server.v1}/responses/{response_id}/timeline", timeout=10).json()["marks"]
    return next(mark["at"] for mark in marks if mark["event"] == "model.called")


def background(client: openai.OpenAI, window: str, **options: Any) -> str:
    response = client.responses.create(
        model="o4-mini", input="Say hi.", background=True, max_output_tokens=8, reasoning={"effort": "none"},
        background_options={"completion_window": window, **options},  # type: ignore[typeddict-item]
    )  # fmt: skip
    assert response.status == "queued"
    return response.id


def test_later_windows_run_after_sooner_work_in_order(server: LiveServer, client: openai.OpenAI) -> None:
    holder = Holder(server)
    eight = background(client, "8h")
    two = background(client, "2h")
    follow_up = background(client, "2h", continuation_id="resp_earlier_turn")
    assert client.responses.retrieve(eight).status == "queued"  # answered at once, waiting apart
    soonest: list[str] = []
    waiting = threading.Thread(target=lambda: soonest.append(background(client, "soonest")))
    waiting.start()  # takes the line (its create returns once it holds the slot)
    holder.thread.join(60)
    waiting.join(60)
    ids = [soonest[0], follow_up, two, eight]
    for response_id in ids:
        with client.responses.retrieve(response_id, stream=True) as events:
            assert [event.type for event in events][-1] in ("response.completed", "response.incomplete")  # ran
    starts = [started_at(server, response_id) for response_id in ids]
    assert starts == sorted(starts)


def test_a_cancel_ends_the_wait_before_the_model_runs(server: LiveServer, client: openai.OpenAI) -> None:
    holder = Holder(server)
    waiting = background(client, "8h")
    cancelled = client.responses.cancel(waiting)
    assert cancelled.status == "cancelled"
    holder.thread.join(60)
    marks = httpx.get(f"{server.v1}/responses/{waiting}/timeline", timeout=10).json()["marks"]
    assert "model.called" not in [mark["event"] for mark in marks]
