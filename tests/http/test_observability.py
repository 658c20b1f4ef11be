"""Prometheus metrics, request ids echoed, and one structured log line per request."""

from __future__ import annotations

import logging
import re
import time

import httpx
import pytest

from tests.conftest import LiveServer
from tests.prometheus_text import metric


def test_metrics_count_requests_tokens_and_streams(http: httpx.Client) -> None:
    before = http.get("/metrics").text
    reply = http.post("/v1/responses", json={"model": "sim", "input": "Reply with: counted"})
    http.post("/v1/responses", json={"model": "sim", "input": "Reply with: streamed", "stream": True})
    wanted = metric(before, "responsa_requests_total", route="/v1/responses", status="200") + 2
    deadline = time.monotonic() + 5
    # A request is counted when its last byte is sent, which can be just after the client has it.
    while (
        metric(text := http.get("/metrics").text, "responsa_requests_total", route="/v1/responses", status="200")
        < wanted
    ):
        assert time.monotonic() < deadline
        time.sleep(0.01)
    assert (
        metric(text, "responsa_tokens_total", kind="output")
        >= metric(before, "responsa_tokens_total", kind="output") + 2
    )
    assert "responsa_active_streams" in text and "responsa_request_seconds_bucket" in text
    assert http.get("/metrics").headers["content-type"].startswith("text/plain")
    assert reply.status_code == 200


def test_request_ids_are_echoed_or_made(http: httpx.Client) -> None:
    mine = http.get("/v1/models", headers={"x-request-id": "abc-123"})
    assert mine.headers["x-request-id"] == "abc-123"
    made = [http.get("/v1/models").headers["x-request-id"] for _ in range(3)]
    assert all(re.fullmatch(r"req_[0-9a-f]{32}", made_id) for made_id in made), made  # as long as OpenAI's
    assert len(set(made)) == 3
    assert http.get("/v1/responses/resp_nope").headers["x-request-id"].startswith("req_")


def test_one_log_line_per_request(server: LiveServer, http: httpx.Client, caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.INFO, logger="responsa.access"):
        http.get("/v1/models", headers={"x-request-id": "log-me-please"})
    lines = [r.getMessage() for r in caplog.records if "log-me-please" in r.getMessage()]
    assert len(lines) == 1
    assert re.search(
        r"request_id=log-me-please tenant=default method=GET path=/v1/models status=200 duration_ms=[0-9.]+", lines[0]
    )
