"""Rate limits per key, body size and input item limits: clear errors, and nothing stored."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import httpx

from responsa.config import ApiKey, Settings
from tests.conftest import serve


def stored(db: Path) -> int:
    with sqlite3.connect(db) as conn:
        return int(conn.execute("SELECT count(*) FROM responses").fetchone()[0])


def test_requests_per_minute(tmp_path: Path) -> None:
    db = tmp_path / "rpm.db"
    key = ApiKey("k", "limited", requests_per_minute=3)
    with serve(Settings(db_url=f"sqlite:///{db}", api_keys=(key,), embedded=False)) as live:
        headers = {"authorization": "Bearer k"}
        for _ in range(3):
            assert (
                httpx.post(f"{live.v1}/responses", json={"model": "sim", "input": "hi"}, headers=headers).status_code
                == 200
            )
        refused = httpx.post(f"{live.v1}/responses", json={"model": "sim", "input": "hi"}, headers=headers)
        assert refused.status_code == 429
        error = refused.json()["error"]
        assert (error["type"], error["code"]) == ("rate_limit_error", "rate_limit_exceeded")
        assert "requests per minute" in error["message"]
        assert 1 <= int(refused.headers["retry-after"]) <= 20
        assert stored(db) == 3


def test_tokens_per_minute(tmp_path: Path) -> None:
    db = tmp_path / "tpm.db"
    key = ApiKey("k", "tokens", tokens_per_minute=40)
    with serve(Settings(db_url=f"sqlite:///{db}", api_keys=(key,), embedded=False)) as live:
        headers = {"authorization": "Bearer k"}
        first = httpx.post(f"{live.v1}/responses", json={"model": "sim", "input": "Explain the tides of the sea"},
                           headers=headers).json()  # fmt: skip
        assert first["usage"]["total_tokens"] > 40
        refused = httpx.post(f"{live.v1}/responses", json={"model": "sim", "input": "hi"}, headers=headers)
        assert refused.status_code == 429 and "tokens per minute" in refused.json()["error"]["message"]
        assert int(refused.headers["retry-after"]) >= 1
        assert stored(db) == 1


def test_body_size_and_item_count_limits(tmp_path: Path) -> None:
    db = tmp_path / "size.db"
    with serve(Settings(db_url=f"sqlite:///{db}", max_body_bytes=2048, max_input_items=3, embedded=False)) as live:
        big = httpx.post(f"{live.v1}/responses", json={"model": "sim", "input": "x" * 3000})
        assert big.status_code == 413 and big.json()["error"]["code"] == "request_too_large"
        many = httpx.post(
            f"{live.v1}/responses", json={"model": "sim", "input": [{"role": "user", "content": "x"}] * 4}
        )
        assert many.status_code == 400
        assert (many.json()["error"]["param"], many.json()["error"]["code"]) == ("input", "too_many_items")
        assert (
            httpx.post(
                f"{live.v1}/responses", json={"model": "sim", "input": [{"role": "user", "content": "x"}] * 3}
            ).status_code
            == 200
        )
        assert stored(db) == 1
