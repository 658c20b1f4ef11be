"""Killed in the middle, a batch goes on and its webhook arrives: a real ``responsa serve`` process is
SIGKILLed while a batch's lines run and while a webhook's delivery waits for its retry; restarted on
the same store, the batch completes with every line's result exactly once, and the event that was
written with the batch's end is delivered (at least once, under one ``webhook-id``)."""

from __future__ import annotations

import json
import signal
from pathlib import Path

import openai

from tests.conftest import start_serve
from tests.http.test_batches import finished, jsonl, line, ran, upload
from tests.webhook_receiver import Receiver

LINES = 40


def _serve(db_url: str, log: Path) -> tuple[object, openai.OpenAI]:
    process, url = start_serve(
        "--db",
        db_url,
        "--no-embedded",
        "--no-code-interpreter",
        "--sim-token-delay-ms",
        "15",
        "--batch-concurrency",
        "4",
        "--background-lease-secs",
        "1",
        "--log-level",
        "warning",
        log=log,
    )
    return process, openai.OpenAI(base_url=f"{url}/v1", api_key="unused", max_retries=0)


def test_a_killed_server_loses_no_line_and_no_event(fresh_db_url: str, tmp_path: Path) -> None:
    log = tmp_path / "serve.log"
    with Receiver(statuses=[500]) as receiver:
        process, client = _serve(fresh_db_url, log)
        endpoint = client.webhooks.create(name="ops", url=receiver.url, event_types=["batch.completed"])
        lines = [line(f"k{index}", {"model": "sim", "input": "Tell me a long story."}) for index in range(LINES)]
        file_id = upload(client, lines)
        batch = client.batches.create(input_file_id=file_id, endpoint="/v1/responses", completion_window="24h")
        seen = ran(client, batch.id, 5)
        process.send_signal(signal.SIGKILL)  # type: ignore[attr-defined]
        process.wait()  # type: ignore[attr-defined]
        assert seen.request_counts is not None and seen.request_counts.completed < LINES, "nothing left to lose"

        process, client = _serve(fresh_db_url, log)
        first, _ = receiver.next(60)  # the end is announced; the receiver fails the first delivery
        done = client.batches.retrieve(batch.id)
        process.send_signal(signal.SIGKILL)  # type: ignore[attr-defined]  (before its retry, due 1 s later)
        process.wait()  # type: ignore[attr-defined]
        assert done.status == "completed" and done.request_counts is not None
        assert (done.request_counts.completed, done.request_counts.failed) == (LINES, 0)
        process, client = _serve(fresh_db_url, log)
        try:
            second, body = receiver.next(60)
            assert second["webhook-id"] == first["webhook-id"]
            event = client.webhooks.unwrap(body, second, secret=endpoint.signing_secret)
            assert event.type == "batch.completed" and event.data.id == batch.id
            assert done.output_file_id is not None
            output = [json.loads(entry) for entry in client.files.content(done.output_file_id).text.splitlines()]
            assert sorted(entry["custom_id"] for entry in output) == sorted(f"k{index}" for index in range(LINES))
            assert len({entry["response"]["body"]["id"] for entry in output}) == LINES
        finally:
            process.send_signal(signal.SIGTERM)  # type: ignore[attr-defined]
            process.wait(30)  # type: ignore[attr-defined]


# The first write that records a line's result fails, once (a sequence is not rolled back with the
# transaction): the process stands for one killed after storing the line's response and before
# recording its result. The line's lease runs out and its run is taken up again.
_FAIL_FIRST_RESULT = """
CREATE SEQUENCE results_seen;
CREATE FUNCTION fail_first_result() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF nextval('results_seen') = 1 THEN RAISE EXCEPTION 'injected: the process died here'; END IF;
    RETURN NEW;
END $$;
CREATE TRIGGER fail_first_result BEFORE UPDATE OF state ON batch_lines
    FOR EACH ROW WHEN (NEW.state = 'completed') EXECUTE FUNCTION fail_first_result();
"""


def test_a_line_whose_response_was_stored_but_not_its_result_is_not_made_twice(tmp_path: Path) -> None:
    """Deterministic form of the kill between a line's two commits (a 600-line batch killed six times
    stored 3-16 responses twice before): the line's run after the lapse takes the stored response as
    its result, and the store holds one response per line."""
    import anyio
    import asyncpg

    from responsa.config import Settings
    from tests.conftest import fresh_postgres_database, serve
    from tests.crash_drill import query

    with fresh_postgres_database() as db_url:
        settings = Settings(db_url=db_url, background_lease_secs=1.0, batch_concurrency=1)
        with serve(settings) as server:

            async def install() -> None:
                conn = await asyncpg.connect(db_url)
                try:
                    await conn.execute(_FAIL_FIRST_RESULT)
                finally:
                    await conn.close()

            anyio.run(install)
            with openai.OpenAI(base_url=server.v1, api_key="unused", max_retries=0) as client:
                lines = [line(f"k{index}", {"model": "sim", "input": f"Say {index}"}) for index in range(3)]
                batch = client.batches.create(input_file_id=upload(client, lines), endpoint="/v1/responses",
                                              completion_window="24h")  # fmt: skip
                done = finished(client, batch.id)
                assert done.status == "completed" and done.output_file_id is not None
                output = jsonl(client, done.output_file_id)
                assert sorted(entry["custom_id"] for entry in output) == ["k0", "k1", "k2"]
                assert query(db_url, "SELECT nextval('results_seen')")[0][0] > 4, "the failure was not injected"
                stored = {row[0] for row in query(db_url, "SELECT id FROM responses")}
                assert stored == {entry["response"]["body"]["id"] for entry in output}
