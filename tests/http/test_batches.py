"""The Batch API through the openai SDK (``client.batches``, ``client.files``), on SQLite and PostgreSQL:
a file of responses lines completes with OpenAI's output and error files; bad files fail with the
line numbers; chat completion lines; cancel keeps what finished; each tenant sees only its own."""

from __future__ import annotations

import io
import json
import time
from typing import Any

import openai
import pytest
from openai.types import Batch

from responsa.config import ApiKey, Settings
from tests.conftest import LiveServer, serve

TERMINAL = ("completed", "failed", "expired", "cancelled")


def upload(client: openai.OpenAI, lines: list[dict[str, Any] | str], purpose: str = "batch") -> str:
    text = "\n".join(line if isinstance(line, str) else json.dumps(line) for line in lines)
    return client.files.create(file=("input.jsonl", io.BytesIO(text.encode())), purpose=purpose).id  # type: ignore[arg-type]


def line(custom_id: str, body: dict[str, Any], url: str = "/v1/responses") -> dict[str, Any]:
    return {"custom_id": custom_id, "method": "POST", "url": url, "body": body}


def finished(client: openai.OpenAI, batch_id: str, seconds: float = 60) -> Batch:
    """The batch once it reaches a final state (its status is what the test waits on)."""
    deadline = time.monotonic() + seconds
    while (batch := client.batches.retrieve(batch_id)).status not in TERMINAL:
        assert time.monotonic() < deadline, f"batch still {batch.status}"
        time.sleep(0.05)
    return batch


def ran(client: openai.OpenAI, batch_id: str, lines: int, seconds: float = 60) -> Batch:
    """The batch once ``lines`` of its lines completed."""
    deadline = time.monotonic() + seconds
    while (batch := client.batches.retrieve(batch_id)).request_counts is None or batch.request_counts.completed < lines:
        assert time.monotonic() < deadline, f"batch {batch.status}, {batch.request_counts}"
        time.sleep(0.02)
    return batch


def jsonl(client: openai.OpenAI, file_id: str) -> list[dict[str, Any]]:
    return [json.loads(text) for text in client.files.content(file_id).text.splitlines()]


def test_a_responses_batch_completes_with_output_and_error_files(client: openai.OpenAI) -> None:
    lines = [
        line(f"q{index}", {"model": "sim", "input": f"Say {index}", "metadata": {"n": str(index)}})
        for index in range(6)
    ]
    lines.append(line("bad", {"model": "sim", "input": 5}))
    created = client.batches.create(
        input_file_id=upload(client, lines), endpoint="/v1/responses", completion_window="24h", metadata={"job": "eval"}
    )
    assert created.status == "validating" and created.metadata == {"job": "eval"}
    batch = finished(client, created.id)
    assert batch.status == "completed"
    assert batch.request_counts is not None
    assert (batch.request_counts.total, batch.request_counts.completed, batch.request_counts.failed) == (7, 6, 1)
    assert batch.model == "sim" and batch.in_progress_at and batch.finalizing_at and batch.completed_at
    assert batch.output_file_id and batch.error_file_id
    output = jsonl(client, batch.output_file_id)
    assert [entry["custom_id"] for entry in output] == [f"q{index}" for index in range(6)]
    for index, entry in enumerate(output):
        assert entry["id"].startswith("batch_req_") and entry["error"] is None
        assert entry["response"]["status_code"] == 200
        body = entry["response"]["body"]
        assert body["object"] == "response" and body["status"] == "completed" and body["metadata"] == {"n": str(index)}
        assert client.responses.retrieve(body["id"]).output_text == body["output"][0]["content"][0]["text"]
    (error,) = jsonl(client, batch.error_file_id)
    assert error["custom_id"] == "bad" and error["response"]["status_code"] == 400
    assert error["response"]["body"]["error"]["param"] == "input"
    assert client.files.retrieve(batch.output_file_id).purpose == "batch_output"
    assert batch.usage is not None
    bodies = [entry["response"]["body"] for entry in output]
    assert batch.usage.input_tokens == sum(body["usage"]["input_tokens"] for body in bodies) > 0
    assert batch.usage.total_tokens == batch.usage.input_tokens + batch.usage.output_tokens
    assert created.id in [listed.id for listed in client.batches.list(limit=100)]


def test_a_chat_completions_batch(client: openai.OpenAI) -> None:
    lines = [
        line(
            f"c{index}",
            {"model": "sim", "messages": [{"role": "user", "content": f"hi {index}"}]},
            "/v1/chat/completions",
        )
        for index in range(3)
    ]
    batch = client.batches.create(
        input_file_id=upload(client, lines), endpoint="/v1/chat/completions", completion_window="24h"
    )
    batch = finished(client, batch.id)
    assert batch.status == "completed" and batch.error_file_id is None
    assert batch.output_file_id is not None
    for entry in jsonl(client, batch.output_file_id):
        body = entry["response"]["body"]
        assert body["object"] == "chat.completion" and body["choices"][0]["message"]["content"]


@pytest.mark.parametrize(
    ("lines", "errors"),
    [
        (["{not json", json.dumps(line("a", {"model": "sim", "input": "x"}))], [("invalid_json_line", 1)]),
        (
            [line("a", {"model": "sim", "input": "x"}), line("a", {"model": "sim", "input": "y"})],
            [("duplicate_custom_id", 2)],
        ),
        (
            [line("a", {"model": "sim", "input": "x"}), line("b", {"model": "sim", "input": "y"}, "/v1/embeddings")],
            [("url_mismatch", 2)],
        ),
        ([line("a", {"model": "no-such-model", "input": "x"})], [("model_not_found", 1)]),
        (
            [{"custom_id": "a", "method": "GET", "url": "/v1/responses", "body": {"model": "sim"}}],
            [("invalid_method", 1)],
        ),
        ([" "], [("empty_file", None)]),
    ],
    ids=["json", "duplicate", "mixed-endpoint", "unknown-model", "method", "empty"],
)
def test_a_bad_input_file_fails_the_batch_naming_its_lines(
    client: openai.OpenAI, lines: list[Any], errors: list[tuple[str, int | None]]
) -> None:
    batch = client.batches.create(
        input_file_id=upload(client, lines), endpoint="/v1/responses", completion_window="24h"
    )
    batch = finished(client, batch.id)
    assert batch.status == "failed" and batch.failed_at and batch.output_file_id is None
    assert batch.errors is not None and batch.errors.data is not None
    assert [(error.code, error.line) for error in batch.errors.data] == errors


def test_create_refuses_what_cannot_be_a_batch(client: openai.OpenAI) -> None:
    good = upload(client, [line("a", {"model": "sim", "input": "x"})])
    with pytest.raises(openai.BadRequestError) as wrong_purpose:
        client.batches.create(
            input_file_id=upload(client, [line("a", {"model": "sim", "input": "x"})], "user_data"),
            endpoint="/v1/responses",
            completion_window="24h",
        )
    assert wrong_purpose.value.body["param"] == "input_file_id"  # type: ignore[index]
    with pytest.raises(openai.BadRequestError) as endpoint:
        client.batches.create(input_file_id=good, endpoint="/v1/videos", completion_window="24h")
    assert endpoint.value.body["param"] == "endpoint"  # type: ignore[index]
    with pytest.raises(openai.BadRequestError) as window:
        client.batches.create(input_file_id=good, endpoint="/v1/responses", completion_window="1h")  # type: ignore[arg-type]
    assert window.value.body["param"] == "completion_window"  # type: ignore[index]
    with pytest.raises(openai.NotFoundError):
        client.batches.create(input_file_id="file-nope", endpoint="/v1/responses", completion_window="24h")
    with pytest.raises(openai.NotFoundError):
        client.batches.retrieve("batch_nope")


@pytest.fixture(scope="module")
def slow_server(tmp_path_factory: pytest.TempPathFactory) -> Any:
    db = tmp_path_factory.mktemp("batches-slow") / "r.db"
    with serve(Settings(db_url=f"sqlite:///{db}", sim_token_delay_ms=20, batch_concurrency=2)) as live:
        yield live


def test_cancel_keeps_what_finished_and_lists_the_rest(slow_server: LiveServer) -> None:
    client = openai.OpenAI(base_url=slow_server.v1, api_key="unused", max_retries=0)
    lines = [line(f"s{index}", {"model": "sim", "input": "Write a long story."}) for index in range(30)]
    batch = client.batches.create(
        input_file_id=upload(client, lines), endpoint="/v1/responses", completion_window="24h"
    )
    ran(client, batch.id, 2)
    cancelling = client.batches.cancel(batch.id)
    assert cancelling.status == "cancelling" and cancelling.cancelling_at
    batch = finished(client, batch.id)
    assert batch.status == "cancelled" and batch.cancelled_at
    assert batch.request_counts is not None and 2 <= batch.request_counts.completed < 30
    assert batch.output_file_id and batch.error_file_id
    done = [entry["custom_id"] for entry in jsonl(client, batch.output_file_id)]
    never = jsonl(client, batch.error_file_id)
    assert {entry["error"]["code"] for entry in never} == {"batch_cancelled"}
    assert sorted(done + [entry["custom_id"] for entry in never]) == sorted(f"s{index}" for index in range(30))
    with pytest.raises(openai.ConflictError):
        client.batches.cancel(
            finished(
                client,
                client.batches.create(
                    input_file_id=upload(client, [line("x", {"model": "sim", "input": "x"})]),
                    endpoint="/v1/responses",
                    completion_window="24h",
                ).id,
            ).id
        )


def test_each_tenant_sees_only_its_own_batches(tmp_path_factory: pytest.TempPathFactory) -> None:
    db = tmp_path_factory.mktemp("batches-tenants") / "r.db"
    settings = Settings(db_url=f"sqlite:///{db}", api_keys=(ApiKey("key-a", "a"), ApiKey("key-b", "b")))
    with serve(settings) as live:
        first = openai.OpenAI(base_url=live.v1, api_key="key-a", max_retries=0)
        second = openai.OpenAI(base_url=live.v1, api_key="key-b", max_retries=0)
        file_id = upload(first, [line("a", {"model": "sim", "input": "x"})])
        with pytest.raises(openai.NotFoundError):  # another tenant's file is not there
            second.batches.create(input_file_id=file_id, endpoint="/v1/responses", completion_window="24h")
        batch = finished(
            first, first.batches.create(input_file_id=file_id, endpoint="/v1/responses", completion_window="24h").id
        )
        assert batch.status == "completed"
        with pytest.raises(openai.NotFoundError):
            second.batches.retrieve(batch.id)
        assert [listed.id for listed in second.batches.list()] == []
        assert batch.output_file_id is not None
        with pytest.raises(openai.NotFoundError):
            second.files.content(batch.output_file_id)


def test_lines_wait_for_the_tenants_rate_limit_instead_of_failing(tmp_path_factory: pytest.TempPathFactory) -> None:
    """A batch's lines pass the tenant's request limit as its HTTP requests do: with 60 a minute (one
    a second back) and three requests spent, 64 lines empty the bucket and the last 7 wait for its
    refill, so the batch cannot end sooner than about 7 s after it started (unlimited, 64 simulated
    lines take well under a second); none fails."""
    from tests.webhook_receiver import Receiver

    db = tmp_path_factory.mktemp("batches-limits") / "r.db"
    settings = Settings(
        db_url=f"sqlite:///{db}",
        api_keys=(ApiKey("key-a", "a", requests_per_minute=60),),
        webhook_allow_hosts=("127.0.0.1",),
    )
    with serve(settings) as live, Receiver() as receiver:
        client = openai.OpenAI(base_url=live.v1, api_key="key-a", max_retries=0)
        endpoint = client.webhooks.create(name="end", url=receiver.url, event_types=["batch.completed"])
        lines = [line(f"l{index}", {"model": "sim", "input": "x"}) for index in range(64)]
        batch = client.batches.create(
            input_file_id=upload(client, lines), endpoint="/v1/responses", completion_window="24h"
        )
        headers, body = receiver.next(90)  # waited for without spending requests
        assert client.webhooks.unwrap(body, headers, secret=endpoint.signing_secret).data.id == batch.id
        while True:  # the bucket may be empty still: one request a second comes back
            try:
                done = client.batches.retrieve(batch.id)
                break
            except openai.RateLimitError:
                time.sleep(0.2)
        assert done.request_counts is not None
        assert (done.request_counts.completed, done.request_counts.failed) == (64, 0)
        assert done.in_progress_at is not None and done.completed_at is not None
        assert done.completed_at - done.in_progress_at >= 5, (done.in_progress_at, done.completed_at)


def test_an_expired_batch_keeps_what_it_finished(tmp_path_factory: pytest.TempPathFactory) -> None:
    """Its window ends while lines remain (the test moves the end into the past in the store, as a
    day's wait would): no line starts after it, the batch is ``expired``, the lines that ran are in the
    output file and the rest in the error file as ``batch_expired``, and ``batch.expired`` is sent."""
    import sqlite3

    from tests.webhook_receiver import Receiver

    db = tmp_path_factory.mktemp("batches-expiry") / "r.db"
    with serve(Settings(db_url=f"sqlite:///{db}", sim_token_delay_ms=20, batch_concurrency=2)) as live, \
            Receiver() as receiver:  # fmt: skip
        client = openai.OpenAI(base_url=live.v1, api_key="unused", max_retries=0)
        endpoint = client.webhooks.create(name="ops", url=receiver.url, event_types=["batch.expired"])
        lines = [line(f"x{index}", {"model": "sim", "input": "Write a long story."}) for index in range(30)]
        batch = client.batches.create(
            input_file_id=upload(client, lines), endpoint="/v1/responses", completion_window="24h"
        )
        ran(client, batch.id, 2)
        with sqlite3.connect(db) as conn:
            conn.execute("UPDATE batches SET expires_at = ? WHERE id = ?", (int(time.time()) - 1, batch.id))
        headers, body = receiver.next(60)
        assert client.webhooks.unwrap(body, headers, secret=endpoint.signing_secret).data.id == batch.id
        expired = client.batches.retrieve(batch.id)
        assert expired.status == "expired" and expired.expired_at and expired.request_counts is not None
        assert expired.output_file_id and expired.error_file_id
        done = [entry["custom_id"] for entry in jsonl(client, expired.output_file_id)]
        never = jsonl(client, expired.error_file_id)
        assert len(done) == expired.request_counts.completed and 2 <= len(done) < 30
        assert {entry["error"]["code"] for entry in never} == {"batch_expired"}
        assert sorted(done + [entry["custom_id"] for entry in never]) == sorted(f"x{index}" for index in range(30))


def test_a_line_larger_than_the_body_limit_gets_the_413_its_request_would(
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    """``--max-body-bytes`` holds for a batch's lines as for requests (a 1.3 MB line ran before)."""
    db = tmp_path_factory.mktemp("batches-body-limit") / "r.db"
    with serve(Settings(db_url=f"sqlite:///{db}", max_body_bytes=4096)) as live:
        client = openai.OpenAI(base_url=live.v1, api_key="unused", max_retries=0)
        big = {"model": "sim", "input": "rivers " * 1000}
        with pytest.raises(openai.APIStatusError) as refused:  # the same body as a request
            client.responses.create(**big)
        assert refused.value.status_code == 413
        lines = [line("small", {"model": "sim", "input": "Say hi"}), line("big", big)]
        batch = finished(client, client.batches.create(input_file_id=upload(client, lines), endpoint="/v1/responses",
                                                       completion_window="24h").id)  # fmt: skip
        assert batch.status == "completed" and batch.output_file_id and batch.error_file_id
        assert [entry["custom_id"] for entry in jsonl(client, batch.output_file_id)] == ["small"]
        [error] = jsonl(client, batch.error_file_id)
        assert error["custom_id"] == "big" and error["response"]["status_code"] == 413
        assert error["response"]["body"]["error"]["code"] == "request_too_large"
