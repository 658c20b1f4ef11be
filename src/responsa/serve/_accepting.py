"""The event loop the server runs on: uvloop's, taking every connection waiting when the listening
socket is readable.

uvloop's libuv accepts one connection each time the loop polls the listening socket. While the loop
is busy (a thousand streams in flight), a turn of it takes tens of milliseconds, so connections are
taken at a few dozen a second and those beyond wait in the kernel's queue, established but unread,
for as long as the load lasts (with ``load.py -c 1000 --stream``: TTFB p99 about the whole run). Here
the listening socket is watched by the loop and drained on each poll (up to the backlog, as asyncio's
own loop does); each connection is handed to the loop as an accepted socket, so it is served as any
other. uvicorn takes the loop by name (``Config(loop="responsa.serve._accepting:AcceptingLoop")``).

Taking every waiting connection would let one of several workers take them all (a burst of
keep-alive connections then stays on it), so the workers do not share one listening socket: the
socket the parent binds is marked ``SO_REUSEPORT`` (:func:`reuse_port_socket`) and each worker
listens on a socket of its own bound to the same address, among which the kernel spreads the
connections evenly.
"""

from __future__ import annotations

import asyncio
import logging
import socket
from collections.abc import Callable
from typing import Any

import uvloop

__all__ = ["AcceptingLoop", "reuse_port_socket"]

logger = logging.getLogger(__name__)


class AcceptingLoop(uvloop.Loop):
    """uvloop, with plain TCP servers on a given socket taking every waiting connection at once."""

    async def create_server(
        self, protocol_factory: Callable[[], asyncio.BaseProtocol], *args: Any, **options: Any
    ) -> Any:
        listening: socket.socket | None = options.get("sock")
        if args or listening is None or options.get("ssl") is not None or listening.family == socket.AF_UNIX:
            return await super().create_server(protocol_factory, *args, **options)
        backlog = options.get("backlog") or 100
        if listening.getsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT):  # a worker's: a socket of its own
            listening = _bound_like(listening)
        return _DrainingServer(self, protocol_factory, listening, backlog)


def reuse_port_socket(host: str, port: int) -> socket.socket:
    """The parent's socket for workers: bound (so the port is taken, and a port of 0 chosen), never
    listened on; each worker listens on its own, bound alike (``SO_REUSEPORT``)."""
    bound = _reusing_port(socket.AF_INET6 if ":" in host else socket.AF_INET, (host, port))
    bound.set_inheritable(True)
    return bound


def _bound_like(shared: socket.socket) -> socket.socket:
    return _reusing_port(shared.family, shared.getsockname()[:2])


def _reusing_port(family: socket.AddressFamily, address: tuple[str, int]) -> socket.socket:
    """A TCP socket bound to ``address`` among others bound alike (``SO_REUSEPORT``)."""
    bound = socket.socket(family, socket.SOCK_STREAM)
    bound.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    bound.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
    bound.bind(address)
    return bound


class _DrainingServer:
    """What uvicorn needs of a server (``sockets``, ``close``, ``wait_closed``), accepting by draining."""

    def __init__(
        self,
        loop: asyncio.AbstractEventLoop,
        protocol_factory: Callable[[], asyncio.BaseProtocol],
        listening: socket.socket,
        backlog: int,
    ) -> None:
        self._loop, self._protocol_factory, self._listening, self._backlog = loop, protocol_factory, listening, backlog
        self._connections: set[asyncio.Task[Any]] = set()
        listening.setblocking(False)
        listening.listen(backlog)  # bound, not yet listening (as a server is handed its socket)
        loop.add_reader(listening.fileno(), self._accept_waiting)
        self._serving = True

    @property
    def sockets(self) -> tuple[socket.socket, ...]:
        return (self._listening,)

    def _accept_waiting(self) -> None:
        for _ in range(self._backlog):
            try:
                connection, _address = self._listening.accept()
            except (BlockingIOError, InterruptedError):
                return
            except OSError as error:  # out of file descriptors, or the peer gone already: next poll
                logger.warning("accepting a connection failed: %s", error)
                return
            connection.setblocking(False)
            task = self._loop.create_task(self._loop.connect_accepted_socket(self._protocol_factory, connection))
            self._connections.add(task)
            task.add_done_callback(self._connected)

    def _connected(self, task: asyncio.Task[Any]) -> None:
        self._connections.discard(task)
        if not task.cancelled() and task.exception() is not None:
            logger.warning("serving an accepted connection failed: %s", task.exception())

    def is_serving(self) -> bool:
        return self._serving

    def close(self) -> None:
        """Stop accepting (the connections taken go on until the server closes them); a worker's own
        socket is closed, so the kernel sends new connections to the others."""
        if self._serving:
            self._serving = False
            self._loop.remove_reader(self._listening.fileno())
            if self._listening.getsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT):
                self._listening.close()

    async def wait_closed(self) -> None:
        return None
