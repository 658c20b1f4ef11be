"""An idle connection stays open past the clients' own keep-alive expiry (``--keep-alive-secs``).

The openai SDK (httpx) reuses a connection idle for up to 5 s, uvicorn's own default: a request sent on
one idle just under 5 s met the server's close and failed with ``Server disconnected``."""

from __future__ import annotations

import socket
from pathlib import Path

from responsa.config import Settings
from tests.conftest import LiveServer, serve

REQUEST = b"GET /health HTTP/1.1\r\nHost: responsa\r\n\r\n"


def _answered(connection: socket.socket) -> bytes:
    """The head of one answer to ``REQUEST`` on ``connection`` (its body is short)."""
    connection.sendall(REQUEST)
    return connection.recv(65536)


def _connect(server: LiveServer) -> socket.socket:
    host, port = server.url.removeprefix("http://").split(":")
    return socket.create_connection((host, int(port)), timeout=30)


def test_a_connection_idle_past_the_sdks_expiry_is_still_open(tmp_path: Path) -> None:
    """Both connections answered, then idle: once a server set to 6 s closed its own (past the SDK's 5),
    the default's still answers."""
    short = Settings(db_url=f"sqlite:///{tmp_path / 'a.db'}", embedded=False, code_interpreter=False, keep_alive_secs=6)
    default = Settings(db_url=f"sqlite:///{tmp_path / 'b.db'}", embedded=False, code_interpreter=False)
    with serve(short) as closing, serve(default) as keeping:
        with _connect(closing) as first, _connect(keeping) as second:
            assert _answered(first).startswith(b"HTTP/1.1 200") and _answered(second).startswith(b"HTTP/1.1 200")
            assert first.recv(1) == b"", "the server at 6 s did not close the idle connection"
            assert _answered(second).startswith(b"HTTP/1.1 200"), "the default closed at the SDK's expiry"
