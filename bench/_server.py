"""Start a responsa server in a subprocess on loopback for a benchmark (shared by the bench scripts)."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager

import httpx


def free_port() -> int:
    """A free TCP port on loopback."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@contextmanager
def responsa_server(
    *args: str, env: dict[str, str] | None = None, pin: int | None = None, pids: list[int] | None = None
) -> Iterator[str]:
    """``with responsa_server("--db", url) as base_url:`` yields ``http://127.0.0.1:PORT``."""
    port = free_port()
    command = [sys.executable, "-m", "responsa.cli", "serve", "--port", str(port), "--log-level", "warning", *args]
    if pin is not None:
        command = ["taskset", "-c", str(pin), *command]
    process = subprocess.Popen(command, env={**os.environ, **(env or {})}, stdout=subprocess.DEVNULL)
    url = f"http://127.0.0.1:{port}"
    if pids is not None:
        pids.append(process.pid)
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                httpx.get(f"{url}/health").raise_for_status()
                break
            except httpx.TransportError:
                if process.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError("responsa did not start") from None
                time.sleep(0.05)
        yield url
    finally:
        process.terminate()
        process.wait(15)
