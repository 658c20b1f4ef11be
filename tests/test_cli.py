"""The ``responsa`` command: options, env vars, and a real ``serve`` process answering over HTTP."""

from __future__ import annotations

import os
import re
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx
import openai
from click.testing import CliRunner

from responsa.cli import main, serve

DOCS = Path(__file__).parent.parent / "docs" / "configuration.md"


def test_help_lists_every_option() -> None:
    result = CliRunner().invoke(main, ["serve", "--help"])
    assert result.exit_code == 0
    for option in ("--host", "--port", "--backend", "--db", "--api-key", "--log-level"):
        assert option in result.output


def test_every_setting_is_documented() -> None:
    text = DOCS.read_text()
    for param in serve.params:
        assert any(opt in text for opt in param.opts), f"{param.opts} missing from {DOCS.name}"
        assert param.envvar and str(param.envvar) in text, f"{param.envvar} missing from {DOCS.name}"


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def test_serve_process_answers_and_reads_env_vars(tmp_path: Path) -> None:
    port = free_port()
    db = tmp_path / "cli.db"
    env = {**os.environ, "RESPONSA_PORT": str(port), "RESPONSA_DB": f"sqlite:///{db}"}
    process = subprocess.Popen(
        [sys.executable, "-m", "responsa.cli", "serve"], env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT
    )
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                httpx.get(f"http://127.0.0.1:{port}/health").raise_for_status()
                break
            except httpx.TransportError:
                assert process.poll() is None and time.monotonic() < deadline, "server did not start"
                time.sleep(0.1)
        with openai.OpenAI(base_url=f"http://127.0.0.1:{port}/v1", api_key="x", max_retries=0) as sdk:
            assert sdk.responses.create(model="sim", input="Reply with: from the cli").output_text == "from the cli"
    finally:
        process.terminate()
        output = process.communicate(timeout=15)[0].decode()
    assert db.exists()
    assert re.search(rf"serving simulator on http://127\.0\.0\.1:{port}/v1", output)
