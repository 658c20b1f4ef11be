"""A loopback stand-in for the Hugging Face Hub and a plain file host, speaking the HTTP that
``huggingface_hub`` speaks (tree listing, HEAD with X-Repo-Commit and the LFS sha256 as ETag, ranged
GETs). It can cut a download off part way, once or by stalling, to test resuming."""

from __future__ import annotations

import hashlib
import json
import re
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

COMMIT = "0123456789abcdef0123456789abcdef01234567"
_RESOLVE = re.compile(r"^/(?P<repo>[^/]+/[^/]+)/resolve/[^/]+/(?P<path>.+)$")
_TREE = re.compile(r"^/api/models/(?P<repo>[^/]+/[^/]+)/tree/[^/?]+")


@dataclass
class Hub:
    url: str = ""
    repos: dict[str, dict[str, bytes]] = field(default_factory=dict)
    """repo id → path in the repo → content."""
    files: dict[str, bytes] = field(default_factory=dict)
    """Plain URL path (``/files/x.gguf``) → content."""
    cut_after: dict[str, int] = field(default_factory=dict)
    """URL path → bytes after which the next GET drops the connection (once)."""
    stall_after: dict[str, int] = field(default_factory=dict)
    """URL path → bytes after which every GET from the start stops sending, without closing."""
    requests: list[tuple[str, str, str | None]] = field(default_factory=list)
    """(method, path, Range header) of every request."""
    sent: dict[str, int] = field(default_factory=dict)
    """URL path → bytes sent by GETs so far."""

    def content(self, path: str) -> bytes | None:
        if path in self.files:
            return self.files[path]
        if found := _RESOLVE.match(path):
            return self.repos.get(found["repo"], {}).get(found["path"])
        return None

    def ranges(self, path: str) -> list[str | None]:
        return [header for method, seen, header in self.requests if method == "GET" and seen == path]


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


class _Handler(BaseHTTPRequestHandler):
    server: _HubServer
    protocol_version = "HTTP/1.1"

    def log_message(self, *args: object) -> None:
        pass

    def do_HEAD(self) -> None:
        self._serve(body=False)

    def do_GET(self) -> None:
        path = self.path.split("?", 1)[0]
        if found := _TREE.match(path):
            self._tree(found["repo"])
        else:
            self._serve(body=True)

    def _tree(self, repo: str) -> None:
        self.server.hub.requests.append(("GET", self.path, None))
        if repo not in self.server.hub.repos:
            return self._reply(404, b'{"error": "Repository not found"}', {"X-Error-Code": "RepoNotFound"})
        entries = [
            {"type": "file", "path": name, "size": len(data), "oid": sha256(data)[:40],
             "lfs": {"oid": sha256(data), "size": len(data), "pointerSize": 134}}
            for name, data in sorted(self.server.hub.repos[repo].items())
        ]  # fmt: skip
        self._reply(200, json.dumps(entries).encode(), {"Content-Type": "application/json"})

    def _serve(self, body: bool) -> None:
        path = self.path.split("?", 1)[0]
        self.server.hub.requests.append((self.command, path, self.headers.get("Range")))
        data = self.server.hub.content(path)
        if data is None:
            return self._reply(404, b'{"error": "Entry not found"}', {"X-Error-Code": "EntryNotFound"})
        start = 0
        headers = {"X-Repo-Commit": COMMIT, "ETag": f'"{sha256(data)}"', "Accept-Ranges": "bytes",
                   "Content-Type": "application/octet-stream"}  # fmt: skip
        status = 200
        if body and (wanted := re.match(r"bytes=(\d+)-", self.headers.get("Range") or "")):
            start = int(wanted[1])
            if start >= len(data):
                return self._reply(416, b"", {"Content-Range": f"bytes */{len(data)}"})
            status = 206
            headers["Content-Range"] = f"bytes {start}-{len(data) - 1}/{len(data)}"
        self.send_response(status)
        for name, value in headers.items():
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(data) - start))
        self.end_headers()
        if body:
            self._send_body(path, data, start)

    def _send_body(self, path: str, data: bytes, start: int) -> None:
        cut = self.server.hub.cut_after.pop(path, None)
        stall = self.server.hub.stall_after.get(path) if start == 0 else None
        end = len(data) if cut is None and stall is None else min(cut or stall or 0, len(data))
        for offset in range(start, end, 64 * 1024):
            piece = data[offset : min(offset + 64 * 1024, end)]
            self.wfile.write(piece)
            self.server.hub.sent[path] = self.server.hub.sent.get(path, 0) + len(piece)
        self.wfile.flush()
        if stall is not None:
            time.sleep(3600)  # until the client is killed (daemon thread)
        if cut is not None:
            self.close_connection = True
            self.connection.shutdown(2)

    def _reply(self, status: int, body: bytes, headers: dict[str, str]) -> None:
        self.send_response(status)
        for name, value in headers.items():
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


class _HubServer(ThreadingHTTPServer):
    daemon_threads = True
    hub: Hub


@contextmanager
def running_hub() -> Iterator[Hub]:
    hub = Hub()
    server = _HubServer(("127.0.0.1", 0), _Handler)
    server.hub = hub
    hub.url = f"http://127.0.0.1:{server.server_address[1]}"
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield hub
    finally:
        server.shutdown()
        server.server_close()
