"""With ``--workers 2`` the embedded model is loaded once, in a process of its own that both workers
reach: its weights are mapped there and nowhere else, and what a request can ask of it (a grammar the
decoder holds to, a refusal of one it cannot, log probabilities streamed token by token, a cancel)
works from either worker as in one process."""

from __future__ import annotations

import json
import os
import re
import signal
import time
from collections.abc import Iterator
from pathlib import Path

import openai
import pytest

from responsa.backends.llama_cpp import DEFAULT_MODEL_NAME
from tests.conftest import start_serve
from tests.pinned import distinct_workers

REGEX_TOOL = {"type": "custom", "name": "code",
              "format": {"type": "grammar", "syntax": "regex", "definition": r"\d{3}-[a-z]{2,5}"}}  # fmt: skip


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, int]]:
    directory = Path(tmp_path_factory.mktemp("embedded-workers"))
    process, url = start_serve("--workers", "2", "--db", f"sqlite:///{directory / 'store.db'}",
                               log=directory / "serve.log")  # fmt: skip
    yield url, process.pid
    process.terminate()
    process.wait(30)


def _children(parent: int) -> list[int]:
    return [int(pid) for pid in Path(f"/proc/{parent}/task/{parent}/children").read_text().split()]


def _maps_a_gguf(pid: int) -> bool:
    return ".gguf" in Path(f"/proc/{pid}/maps").read_text()


def test_the_model_is_loaded_once_and_serves_both_workers(server: tuple[str, int]) -> None:
    url, parent = server
    with distinct_workers(url) as places:
        for place in places:
            reply = place.openai().responses.create(model=DEFAULT_MODEL_NAME, input="Say hello", max_output_tokens=8)
            assert reply.output_text.strip()
        workers = {int(place.worker or 0) for place in places}
    assert not any(_maps_a_gguf(worker) for worker in workers)
    assert len([pid for pid in _children(parent) if _maps_a_gguf(pid)]) == 1


def test_grammars_refusals_and_logprobs_cross_to_the_model_process(server: tuple[str, int]) -> None:
    url, _ = server
    with distinct_workers(url) as (one, two):
        held = one.openai().responses.create(model=DEFAULT_MODEL_NAME, input="Give me a code", tools=[REGEX_TOOL],  # type: ignore[list-item]
                                             tool_choice={"type": "custom", "name": "code"}, max_output_tokens=20)  # fmt: skip
        assert re.fullmatch(r"\d{3}-[a-z]{2,5}", held.output[0].input)  # type: ignore[union-attr]
        bad = {"type": "custom", "name": "x", "format": {"type": "grammar", "syntax": "lark",
                                                           "definition": 'start: "a"+\n%ignore " "'}}  # fmt: skip
        with pytest.raises(openai.BadRequestError) as refused:
            two.openai().responses.create(model=DEFAULT_MODEL_NAME, input="go", tools=[bad],  # type: ignore[list-item]
                                          tool_choice={"type": "custom", "name": "x"})  # type: ignore[arg-type]  # fmt: skip
        assert refused.value.code == "unsupported_grammar"
        body = {"model": DEFAULT_MODEL_NAME, "input": "Count to five", "stream": True, "max_output_tokens": 8,
                "top_logprobs": 2, "include": ["message.output_text.logprobs"]}  # fmt: skip
        deltas = []
        with two.http.stream("POST", "/responses", json=body) as reply:
            for line in reply.iter_lines():
                if line.startswith("data: {") and '"response.output_text.delta"' in line:
                    deltas.append(json.loads(line[6:]))
        assert len(deltas) >= 2
        assert all(len(d["logprobs"]) >= 1 and len(d["logprobs"][0]["top_logprobs"]) == 2 for d in deltas)


def test_a_cancel_from_a_worker_stops_the_generation(server: tuple[str, int]) -> None:
    url, _ = server
    with distinct_workers(url) as (one, two):
        started = one.openai().responses.create(model=DEFAULT_MODEL_NAME, input="Write a very long story",
                                                max_output_tokens=4000, background=True,
                                                extra_body={"ignore_eos": True})  # fmt: skip  # no early end
        while (found := two.openai().responses.retrieve(started.id)).status == "queued":
            time.sleep(0.05)
        cancelled = two.openai().responses.cancel(started.id)
        assert cancelled.status == "cancelled"
        usage = one.openai().responses.retrieve(started.id)
        assert usage.status == "cancelled" and found.status == "in_progress"
    # The model process stops decoding it: it comes to idle (decoding, it keeps its threads busy), long
    # before the 4,000 tokens would end (on a loaded machine the cancel may take a moment to reach it).
    (model_process,) = [pid for pid in _children(server[1]) if _maps_a_gguf(pid)]
    deadline = time.monotonic() + 10
    while True:
        before = _cpu_seconds(model_process)
        time.sleep(0.5)
        if _cpu_seconds(model_process) - before < 0.2:
            break
        assert time.monotonic() < deadline, "the model process kept decoding after the cancel"


def _cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def test_a_model_process_that_dies_is_started_again(server: tuple[str, int]) -> None:
    url, parent = server
    (model_process,) = [pid for pid in _children(parent) if _maps_a_gguf(pid)]
    os.kill(model_process, signal.SIGKILL)
    with openai.OpenAI(base_url=f"{url}/v1", api_key="x", max_retries=0) as client:
        deadline = time.monotonic() + 60
        while True:
            try:
                reply = client.responses.create(model=DEFAULT_MODEL_NAME, input="Say hello", max_output_tokens=4)
                break
            except openai.InternalServerError:
                assert time.monotonic() < deadline, "the model process was not started again"
                time.sleep(0.2)
    assert reply.output_text.strip()
    assert model_process not in _children(parent)


def test_the_workers_and_the_model_process_end_with_a_killed_parent(tmp_path: Path) -> None:
    process, _url = start_serve("--workers", "2", "--db", f"sqlite:///{tmp_path / 'store.db'}", log=tmp_path / "log")
    children = _children(process.pid)
    assert len(children) >= 3  # two workers and the model process (and multiprocessing's tracker)
    process.kill()
    process.wait()
    deadline = time.monotonic() + 30
    while alive := [pid for pid in children if Path(f"/proc/{pid}").exists() and _running(pid)]:
        assert time.monotonic() < deadline, f"still running after their parent was killed: {alive}"
        time.sleep(0.1)


def _running(pid: int) -> bool:
    """Alive, not a zombie waiting to be reaped."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except FileNotFoundError:
        return False
