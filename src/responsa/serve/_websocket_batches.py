"""WebSocket mode's events written a batch at a time: uvicorn's ``websockets-sansio`` protocol (the one
its ``auto`` picks) with one ASGI extension, ``websocket.send_batch`` (``texts``: several messages,
each its own frame).

A response's events come in batches (the tokens of one network read); one ASGI ``websocket.send``
each made a trip through Starlette's checks and uvicorn's dispatch, and a write to the socket (a
system call) per event, where SSE writes a batch as one chunk. Here the frames of a batch are made
one after another and written once. ``texts`` are the messages' UTF-8 bytes, as the encoder made
them. Where no extension was agreed (per-message compression is declined unless configured), a
server's text frame is a two-to-ten-byte header before the payload (RFC 6455 5.2: FIN and the text
opcode, the length, no mask), made here for the batch at once: the library's frame object, its
serialisation and ``send_text`` per message were about 6% of a streamed response's Python CPU on this
path. With an extension agreed, the library frames (and compresses) each message. The extension is
announced in the connection's ``scope["extensions"]``, as ASGI extensions are; the HTTP layer uses
it where it is announced and sends message by message elsewhere (another server, the in-process
test client). See docs/performance.md, "WebSocket mode".
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from struct import Struct
from typing import Any

from uvicorn.protocols.utils import ClientDisconnected
from uvicorn.protocols.websockets.websockets_sansio_impl import WebSocketsSansIOProtocol
from websockets.exceptions import InvalidState
from websockets.http11 import Request
from websockets.protocol import State

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
        conn = self.conn
        texts: Sequence[bytes] = message["texts"]
        if conn.extensions or conn.state is not State.OPEN or conn.expect_continuation_frame:
            try:  # the library frames each (it compresses, or says why it cannot send)
                for text in texts:
                    conn.send_text(text)
            except InvalidState:
                raise ClientDisconnected() from None
            frames = conn.data_to_send()
        else:
            frames = [*conn.data_to_send(), *_text_frames(texts)]
        self.transport.write(b"".join(frames))


_SHORT, _MEDIUM, _LONG = Struct("!BB"), Struct("!BBH"), Struct("!BBQ")
_FIN_TEXT = 0x81
"""The first byte of a whole text frame: FIN, and opcode 1."""


def _text_frames(texts: Sequence[bytes]) -> Iterator[bytes]:
    """Each text as one unmasked text frame, a server's (RFC 6455 5.2): its header, then itself."""
    for text in texts:
        size = len(text)
        if size < 126:
            yield _SHORT.pack(_FIN_TEXT, size)
        elif size < 65_536:
            yield _MEDIUM.pack(_FIN_TEXT, 126, size)
        else:
            yield _LONG.pack(_FIN_TEXT, 127, size)
        yield text
