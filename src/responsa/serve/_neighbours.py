"""The workers of one ``responsa serve --workers N`` telling each other of a cancel at once: each binds a
UNIX datagram socket in the workers' private directory, and a worker that takes a cancel for a response
it does not run sends one byte to every other socket there. The store's count of cancels (read every
``--cancel-poll-secs``) stays the way across replicas, and the fallback here: a datagram lost or sent
to a worker that is gone changes nothing but how soon the cancel lands."""

from __future__ import annotations

import asyncio
import os
import socket
from contextlib import suppress
from pathlib import Path

__all__ = ["WorkerNeighbours"]


class WorkerNeighbours:
    """This worker's socket in ``directory``, and the others' (implements the engine's ``Neighbours``)."""

    def __init__(self, directory: Path) -> None:
        self._directory = directory
        self._path = directory / f"{os.getpid()}.sock"
        self._path.unlink(missing_ok=True)  # a worker of the same pid that was killed left it
        self._socket = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        self._socket.setblocking(False)
        self._socket.bind(str(self._path))

    def tell(self) -> None:
        for path in self._directory.glob("*.sock"):
            if path == self._path:
                continue
            try:
                self._socket.sendto(b"!", str(path))
            except ConnectionRefusedError:  # no one is bound to it: a worker that was killed left it
                path.unlink(missing_ok=True)
            except OSError:  # its queue is full: it will look anyway
                pass

    async def hear(self) -> None:
        await asyncio.get_running_loop().sock_recv(self._socket, 16)
        with suppress(BlockingIOError):  # what else came meanwhile is heard by the same look
            while True:
                self._socket.recv(16)

    def close(self) -> None:
        self._socket.close()
        self._path.unlink(missing_ok=True)
