"""Frames between a worker and the model process: a length, then a pickled value. Both ends are this
server's own processes, on a socket in a directory only its user can open."""

from __future__ import annotations

import asyncio
import pickle
import struct
from typing import Any

_LENGTH = struct.Struct("!I")


async def send(writer: asyncio.StreamWriter, value: Any) -> None:
    data = pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL)
    writer.write(_LENGTH.pack(len(data)) + data)
    await writer.drain()


async def receive(reader: asyncio.StreamReader) -> Any:
    """The next value; ``asyncio.IncompleteReadError`` when the other end has gone."""
    (length,) = _LENGTH.unpack(await reader.readexactly(_LENGTH.size))
    return pickle.loads(await reader.readexactly(length))
