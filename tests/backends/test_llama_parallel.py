"""Several requests to one embedded model at once: decoded together in slots (--parallel), each freed
at its next token when cancelled, and a conversation's next turn still evaluating only what is new."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field

import httpx
import openai
import pytest

from responsa.backends.llama_cpp import DEFAULT_MODEL_NAME
from responsa.config import Settings
from tests.conftest import serve

MODEL = DEFAULT_MODEL_NAME


@pytest.fixture(scope="module")
def base_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    db = f"sqlite:///{tmp_path_factory.mktemp('parallel')}/db.sqlite"
    with serve(Settings(db_url=db, simulator=False, parallel=2)) as server:
        yield server.v1


@dataclass
class Stream:
    """A streamed response read on its own thread: when its first text came, its events, when it ended."""

    url: str
    body: dict[str, object]
    first_text: float = 0.0
    ended: float = 0.0
    response_id: str = ""
    final: str = ""
    started: threading.Event = field(default_factory=threading.Event)

    def __post_init__(self) -> None:
        self.thread = threading.Thread(target=self._read, daemon=True)
        self.thread.start()

    def _read(self) -> None:
        with httpx.Client(timeout=300) as http, http.stream("POST", f"{self.url}/responses", json=self.body) as reply:
            for line in reply.iter_lines():
                if not self.response_id and '"response.created"' in line:
                    self.response_id = line.split('"id":"', 1)[1].split('"', 1)[0]
                if not self.first_text and '"response.output_text.delta"' in line:
                    self.first_text = time.monotonic()
                    self.started.set()
                if line.startswith("event: response.") and line.split(".", 1)[1] in ("completed", "incomplete",
                                                                                      "cancelled", "failed"):  # fmt: skip
                    self.final = line.removeprefix("event: ")
        self.ended = time.monotonic()


def story(tokens: int, topic: str) -> dict[str, object]:
    return {"model": MODEL, "input": f"Tell a long story about {topic}.", "max_output_tokens": tokens,
            "ignore_eos": True, "stream": True}  # fmt: skip


def test_two_streams_are_decoded_together(base_url: str) -> None:
    first = Stream(base_url, story(150, "a river"))
    assert first.started.wait(60)
    second = Stream(base_url, story(20, "a mountain"))
    second.thread.join(120)
    first.thread.join(120)
    assert first.final == second.final == "response.incomplete"  # each ran to its max_output_tokens
    # One after another, the second could not start before the first ended; together it starts and ends first.
    assert second.first_text < first.ended and second.ended < first.ended


def test_a_cancelled_stream_frees_its_slot_for_the_next_request(base_url: str, client: openai.OpenAI) -> None:
    long_ones = [Stream(base_url, story(2000, topic)) for topic in ("the sea", "the sky")]  # both slots taken
    for stream in long_ones:
        assert stream.started.wait(60)
    with httpx.Client(base_url=base_url, timeout=60) as http:
        # Counting tokens needs no slot: it is answered while both slots are busy.
        counted = http.post("/responses/input_tokens", json={"model": MODEL, "input": "How long is this?"})
        assert counted.json()["input_tokens"] > 5 and not any(stream.ended for stream in long_ones)
        assert http.post(f"/responses/{long_ones[1].response_id}/cancel").json()["status"] == "cancelled"
        # A third request gets the freed slot while the first long one still runs.
        reply = http.post("/responses", json={"model": MODEL, "input": "Hi", "max_output_tokens": 4}).json()
        assert reply["status"] in ("completed", "incomplete")
        assert long_ones[0].ended == 0.0
        http.post(f"/responses/{long_ones[0].response_id}/cancel")
        for stream in long_ones:
            stream.thread.join(60)
            assert stream.ended and stream.final == ""  # a cancelled stream just ends (no lifecycle event)
            assert http.get(f"/responses/{stream.response_id}").json()["status"] == "cancelled"


def test_the_next_turn_of_a_conversation_reuses_the_cached_prefix(client: openai.OpenAI) -> None:
    turn = client.responses.create(model=MODEL, input="Name a colour.", max_output_tokens=8, temperature=0)
    again = client.responses.create(
        model=MODEL, previous_response_id=turn.id, input="And another one?", max_output_tokens=8, temperature=0
    )
    assert turn.usage is not None and again.usage is not None
    assert again.usage.input_tokens_details.cached_tokens >= turn.usage.input_tokens


@pytest.fixture
def client(base_url: str) -> Iterator[openai.OpenAI]:
    with openai.OpenAI(base_url=base_url, api_key="-") as client:
        yield client
