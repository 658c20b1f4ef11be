"""The batch runner beside its module, in process with a scripted model, one line at a time
(``batch_concurrency`` 1): each line's answer is the one the script gives it, a line whose model call
fails is an error line naming why while the others complete, and the batch's usage is its lines'."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from responsa.config import Settings
from responsa.protocol import ModelError
from tests.http.test_batches import finished, jsonl, line, upload
from tests.in_process import InProcess, in_process
from tests.scripted import ScriptedBackend, call, text


@pytest.fixture
def one_at_a_time(tmp_path: Path) -> Iterator[tuple[InProcess, ScriptedBackend]]:
    model = ScriptedBackend()
    settings = Settings(db_url=f"sqlite:///{tmp_path / 'r.db'}", batch_concurrency=1, embedded=False)
    with in_process(settings, backends=[model]) as app:
        yield app, model


def test_each_line_gets_its_answer_and_a_failed_model_call_is_an_error_line(
    one_at_a_time: tuple[InProcess, ScriptedBackend],
) -> None:
    app, model = one_at_a_time
    model.turns.extend([text("one"), ModelError("the model broke"), call("lookup", '{"n": 3}')])
    lookup = {"type": "function", "name": "lookup", "parameters": {"type": "object"}}
    lines = [line("a", {"model": "scripted", "input": "1"}), line("b", {"model": "scripted", "input": "2"}),
             line("c", {"model": "scripted", "input": "3", "tools": [lookup]})]  # fmt: skip
    created = app.sdk.batches.create(input_file_id=upload(app.sdk, lines), endpoint="/v1/responses",
                                     completion_window="24h")  # fmt: skip
    batch = finished(app.sdk, created.id)
    assert batch.status == "completed" and batch.request_counts is not None
    assert (batch.request_counts.completed, batch.request_counts.failed) == (2, 1)
    assert batch.output_file_id and batch.error_file_id
    bodies = {entry["custom_id"]: entry["response"]["body"] for entry in jsonl(app.sdk, batch.output_file_id)}
    assert bodies["a"]["output"][0]["content"][0]["text"] == "one"
    [called] = bodies["c"]["output"]
    assert called["type"] == "function_call" and json.loads(called["arguments"]) == {"n": 3}
    [error] = jsonl(app.sdk, batch.error_file_id)
    assert error["custom_id"] == "b" and "the model broke" in json.dumps(error["response"])
    assert [request.items[-1].content[0].text for request in model.requests] == ["1", "2", "3"]  # type: ignore[union-attr]
    assert batch.usage is not None
    assert batch.usage.input_tokens == sum(body["usage"]["input_tokens"] for body in bodies.values()) == 20
