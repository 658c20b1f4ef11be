"""Rate limits that hold across replicas: two ``responsa serve`` processes sharing one Redis give a
tenant one limit between them; when Redis goes away, requests are served under each process's own
limits (fail open, the default) or refused with 503 (``--redis-fail-closed``), and the log says so."""

from __future__ import annotations

import os
import secrets
import shutil
import subprocess
import time
from collections.abc import Iterator
from contextlib import AbstractContextManager
from pathlib import Path

import httpx
import openai
import pytest
import redis

from responsa.config import ApiKey, Settings
from tests.conftest import LiveServer, free_port, serve, start_serve

Processes = list[subprocess.Popen[bytes]]
REDIS_URL = os.environ.get("RESPONSA_TEST_REDIS", "redis://127.0.0.1:6379/0")


@pytest.fixture(scope="module")
def redis_url() -> str:
    """The shared test Redis; skipped when none answers, unless RESPONSA_REQUIRE_REDIS is set (as CI does)."""
    try:
        redis.Redis.from_url(REDIS_URL, socket_connect_timeout=1).ping()
    except redis.RedisError as exc:
        if os.environ.get("RESPONSA_REQUIRE_REDIS"):
            raise
        pytest.skip(f"no Redis at {REDIS_URL}: {exc}")
    return REDIS_URL


class Tenant:
    """A fresh tenant (its Redis keys are new) with a keys file of its limits."""

    def __init__(self, directory: Path, **limits: int) -> None:
        self.name = f"t{secrets.token_hex(6)}"
        self.key = f"sk-{secrets.token_hex(8)}"
        self.keys_file = directory / f"{self.name}.toml"
        lines = [f"[keys.{self.name}]", f'key = "{self.key}"', *(f"{k} = {v}" for k, v in limits.items())]
        self.keys_file.write_text("\n".join(lines) + "\n")

    def client(self, url: str) -> openai.OpenAI:
        return openai.OpenAI(base_url=f"{url}/v1", api_key=self.key, max_retries=0)


@pytest.fixture
def processes() -> Iterator[Processes]:
    started: Processes = []
    yield started
    for process in started:
        process.terminate()
        process.wait(timeout=30)


def _replicas(count: int, tenant: Tenant, redis_at: str, tmp_path: Path, started: Processes, *extra: str) -> list[str]:
    urls = []
    db = f"sqlite:///{tmp_path / 'shared.db'}"
    for _ in range(count):
        process, url = start_serve("--db", db, "--no-embedded", "--keys-file", str(tenant.keys_file),
                                   "--redis", redis_at, *extra, log=tmp_path / "serve.log")  # fmt: skip
        started.append(process)
        urls.append(url)
    return urls


def test_two_replicas_share_one_request_limit(redis_url: str, tmp_path: Path, processes: Processes) -> None:
    tenant = Tenant(tmp_path, requests_per_minute=4)
    first, second = _replicas(2, tenant, redis_url, tmp_path, processes)
    with tenant.client(first) as a, tenant.client(second) as b:
        for client in (a, b, a, b):
            assert client.responses.create(model="sim", input="Reply with: ok").output_text == "ok"
        # Each replica has seen only two requests: its own buckets would let this through.
        with pytest.raises(openai.RateLimitError) as refused:
            b.responses.create(model="sim", input="Reply with: ok")
    assert refused.value.code == "rate_limit_exceeded"
    assert "requests per minute (4)" in refused.value.message
    assert int(refused.value.response.headers["retry-after"]) >= 1


def test_tokens_spent_on_one_replica_count_on_the_other(redis_url: str, tmp_path: Path, processes: Processes) -> None:
    tenant = Tenant(tmp_path, tokens_per_minute=20)
    first, second = _replicas(2, tenant, redis_url, tmp_path, processes)
    with tenant.client(first) as a, tenant.client(second) as b:
        used = a.responses.create(model="sim", input="Tell me about rivers").usage
        assert used is not None and used.total_tokens > 20
        with pytest.raises(openai.RateLimitError) as refused:
            b.responses.create(model="sim", input="Reply with: ok")
    assert "tokens per minute (20)" in refused.value.message


@pytest.fixture
def private_redis(tmp_path: Path) -> Iterator[tuple[str, subprocess.Popen[bytes]]]:
    """A Redis server of this test's own, so that the test can stop it."""
    binary = shutil.which("redis-server")
    if binary is None:
        pytest.skip("redis-server is not installed")
    port = free_port()
    process = subprocess.Popen([binary, "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
                                "--dir", str(tmp_path)], stdout=subprocess.DEVNULL)  # fmt: skip
    url = f"redis://127.0.0.1:{port}/0"
    client, deadline = redis.Redis.from_url(url), time.monotonic() + 10
    while True:
        try:
            client.ping()
            break
        except redis.ConnectionError:
            assert process.poll() is None and time.monotonic() < deadline, "redis-server did not start"
            time.sleep(0.05)
    yield url, process
    process.kill()
    process.wait()


def _one_server(
    tmp_path: Path, redis_at: str, limits: dict[str, int], fail_open: bool = True
) -> tuple[ApiKey, AbstractContextManager[LiveServer]]:
    """An in-process server (so that its log is captured) with one limited key and Redis at ``redis_at``."""
    key = ApiKey(f"sk-{secrets.token_hex(8)}", f"t{secrets.token_hex(6)}", **limits)
    settings = Settings(db_url=f"sqlite:///{tmp_path / 'one.db'}", embedded=False, api_keys=(key,),
                        redis_url=redis_at, redis_fail_open=fail_open)  # fmt: skip
    return key, serve(settings)


def test_without_redis_requests_are_served_under_local_limits_and_the_log_says_so(
    private_redis: tuple[str, subprocess.Popen[bytes]], tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    url, redis_process = private_redis
    key, server = _one_server(tmp_path, url, {"requests_per_minute": 3})
    with server as live, openai.OpenAI(base_url=live.v1, api_key=key.key, max_retries=0) as client:
        client.responses.create(model="sim", input="Reply with: before")  # counted in Redis
        redis_process.kill()
        redis_process.wait()
        for _ in range(3):  # this process's own bucket still holds 3
            assert client.responses.create(model="sim", input="Reply with: served").output_text == "served"
        with pytest.raises(openai.RateLimitError):
            client.responses.create(model="sim", input="Reply with: one too many")
    warnings = [record.getMessage() for record in caplog.records if "Redis" in record.getMessage()]
    assert len(warnings) == 1 and "unreachable" in warnings[0] and "failing open" in warnings[0]


def test_fail_closed_refuses_with_503_while_redis_is_away(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    key, server = _one_server(tmp_path, f"redis://127.0.0.1:{free_port()}/0", {"requests_per_minute": 100}, False)
    with server as live:
        reply = httpx.post(f"{live.v1}/responses", json={"model": "sim", "input": "hi"},
                           headers={"authorization": f"Bearer {key.key}"})  # fmt: skip
    assert reply.status_code == 503
    assert reply.json()["error"]["code"] == "rate_limiter_unavailable"
    assert any("failing closed" in record.getMessage() for record in caplog.records)
