"""``GET /v1/server``: models, each upstream worker's health, load and probe latency, and the same
counters ``/metrics`` exports (requests by status class, tokens, active streams)."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import httpx
import openai

from tests.backends.mock_upstream import Stream, text_chunks
from tests.backends.test_chat_completions import start_rig


def _status(http: httpx.Client) -> dict[str, Any]:
    reply = http.get("/v1/server")
    assert reply.status_code == 200, reply.text
    body: dict[str, Any] = reply.json()
    return body


def test_workers_and_counters(tmp_path: Path) -> None:
    for rig in start_rig(tmp_path, workers=1, upstream_health_interval_secs=0.2):
        before = _status(rig.http)
        assert before["object"] == "server" and "up-model" in before["models"] and "sim" in before["models"]
        [worker] = before["workers"]
        assert worker["model"] == "up-model" and worker["url"] == rig.urls[0] and worker["in_flight"] == 0

        usage = {"prompt_tokens": 7, "completion_tokens": 3}
        rig.first.script.append(Stream(text_chunks("a", "b", "c", usage=usage)))
        rig.sdk.responses.create(model="up-model", input="x")
        try:
            rig.sdk.responses.create(model="no-such-model", input="x")
        except openai.BadRequestError:
            pass
        after = _status(rig.http)
        assert after["tokens"]["input"] - before["tokens"]["input"] == 7
        assert after["tokens"]["output"] - before["tokens"]["output"] == 3
        assert after["requests"]["2xx"] > before["requests"].get("2xx", 0)
        assert after["requests"]["4xx"] - before["requests"].get("4xx", 0) == 1
        assert after["active_streams"] == 0
        metrics = rig.http.get("/metrics").text
        assert 'responsa_tokens_total{kind="output"} ' + f"{after['tokens']['output']}.0" in metrics

        # The probe's round trip, once one has run; a worker that stops answering is shown down.
        deadline = time.monotonic() + 10
        while _status(rig.http)["workers"][0]["latency_ms"] is None:
            assert time.monotonic() < deadline
            time.sleep(0.05)
        rig.first.healthy = False
        while _status(rig.http)["workers"][0]["healthy"]:
            assert time.monotonic() < deadline, "the worker was never marked down"
            time.sleep(0.05)


def test_no_workers_without_upstreams(http: httpx.Client) -> None:
    body = _status(http)
    assert body["workers"] == [] and body["version"] and body["started_at"] <= time.time()
    assert isinstance(body["active_streams"], int)
