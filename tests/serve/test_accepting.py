"""A busy server still takes every waiting connection on each turn of its loop. uvloop's own servers
take one a turn: with a thousand streams in flight a turn lasts tens of milliseconds, and connections
beyond the first few dozen waited, unread, for the whole load (tests/serve/test_workers.py and
docs/operations.md, Overload). Here each turn of the loop is made long on purpose and counted."""

from __future__ import annotations

import asyncio
import socket
import time
from typing import ClassVar

import uvloop

from responsa.serve import AcceptingLoop

CLIENTS = 40


class _Counted(asyncio.Protocol):
    made: ClassVar[list[asyncio.BaseTransport]] = []

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        _Counted.made.append(transport)


def _connected_within_turns(loop: asyncio.AbstractEventLoop, turns: int) -> int:
    """Connections a server on ``loop`` has taken after ``turns`` turns of 50 ms each, when CLIENTS
    connected before the first."""
    _Counted.made = []
    listening = socket.socket()
    listening.bind(("127.0.0.1", 0))
    clients = []

    async def main() -> int:
        server = await loop.create_server(_Counted, sock=listening, backlog=128)
        for _ in range(CLIENTS):
            client = socket.create_connection(listening.getsockname())  # the kernel completes it, queued
            clients.append(client)
        for _ in range(turns):
            time.sleep(0.05)  # a turn's worth of handlers that run without suspending
            await asyncio.sleep(0)
        taken = len(_Counted.made)
        server.close()
        for client in clients:
            client.close()
        for transport in _Counted.made:
            transport.close()
        await server.wait_closed()
        await asyncio.sleep(0.05)  # the transports' closing callbacks
        return taken

    try:
        return loop.run_until_complete(main())
    finally:
        listening.close()
        loop.close()


def test_every_waiting_connection_is_taken_in_a_few_turns() -> None:
    assert _connected_within_turns(AcceptingLoop(), turns=5) == CLIENTS


def test_uvloop_alone_takes_one_a_turn() -> None:
    """The reason for AcceptingLoop: if uvloop drains the queue itself one day, it can go."""
    assert _connected_within_turns(uvloop.new_event_loop(), turns=5) <= 10
