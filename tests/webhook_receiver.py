"""A webhook receiver on loopback for tests: it keeps every delivery (headers and raw body, as the
openai SDK's ``webhooks.unwrap`` reads them) and answers each with the next of its scripted statuses."""

from __future__ import annotations

import queue
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import Self


class Receiver:
    def __init__(self, statuses: list[int] | None = None) -> None:
        self.deliveries: queue.Queue[tuple[dict[str, str], str]] = queue.Queue()
        self._statuses = list(statuses or [])
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers["content-length"])).decode()
                status = receiver._statuses.pop(0) if receiver._statuses else 200
                receiver.deliveries.put(({key.lower(): value for key, value in self.headers.items()}, body))
                self.send_response(status)
                self.send_header("content-length", "0")
                self.end_headers()

            def log_message(self, *args: object) -> None:
                pass

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self._server.server_address[1]}/hook"
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    def next(self, timeout: float = 30) -> tuple[dict[str, str], str]:
        """The next delivery (headers, body), waiting for it."""
        return self.deliveries.get(timeout=timeout)

    def __enter__(self) -> Self:
        self._thread.start()
        return self

    def __exit__(self, *exc: type[BaseException] | BaseException | TracebackType | None) -> None:
        self._server.shutdown()
        self._server.server_close()
