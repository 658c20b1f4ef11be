"""WebSocket mode's events written a batch at a time: uvicorn's ``websockets-sansio`` protocol (the one
its ``auto`` picks) with one ASGI extension, ``websocket.send_batch`` (``texts``: several messages,
each its own frame).

A response's events come in batches (the tokens of one network read); one ASGI ``websocket.send``
each made a trip through Starlette's checks and uvicorn's dispatch, and a write to the socket (a
system call) per event, where SSE writes a batch as one chunk. Here the frames of a batch are made
one after another and written once. The extension is announced in the connection's
``scope["extensions"]``, as ASGI extensions are; the HTTP layer uses it where it is announced and
sends message by message elsewhere (another server, the in-process test client). See
docs/performance.md, "WebSocket mode".
"""

from __future__ import annotations

from typing import Any

from uvicorn.protocols.utils import ClientDisconnected
from uvicorn.protocols.websockets.websockets_sansio_impl import WebSocketsSansIOProtocol
from websockets.exceptions import InvalidState
from websockets.http11 import Request

from responsa.http import SEND_BATCH

__all__ = ["BatchingWebSocketProtocol"]


class BatchingWebSocketProtocol(WebSocketsSansIOProtocol):
    """uvicorn's protocol, taking ``websocket.send_batch`` once the connection is open."""

    def handle_connect(self, event: Request) -> None:
        super().handle_connect(event)
        scope = getattr(self, "scope", None)  # none where the handshake was refused
        if scope is not None:
            scope["extensions"][SEND_BATCH] = {}  # read by the app's task, begun after this

    async def send(self, message: Any) -> None:
        if message["type"] != SEND_BATCH:
            await super().send(message)
            return
        await self.writable.wait()
        if self.disconnected:
            raise ClientDisconnected()
        if not self.handshake_complete or self.close_sent or self.initial_response is not None:
            raise RuntimeError(f"Unexpected ASGI message {SEND_BATCH!r}: the connection is not open.")
        try:
            for text in message["texts"]:
                self.conn.send_text(text.encode())
        except InvalidState:
            raise ClientDisconnected() from None
        self.transport.write(b"".join(self.conn.data_to_send()))
