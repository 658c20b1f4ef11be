"""The model process's side: each connection asks one thing of one backend (describe, count tokens,
embed, or a generation streamed back batch by batch). A worker that closes the connection mid-stream
cancels the generation, as a client's cancel or disconnect does in one process."""

from __future__ import annotations

import asyncio
import pickle
from contextlib import suppress
from pathlib import Path
from typing import Any

from .._abilities import Embeds
from .._base import Backend
from ._wire import receive, send

__all__ = ["serve_backends"]


def description(backend: Backend) -> dict[str, Any]:
    """What a worker needs to know of a backend without asking each time."""
    models = list(backend.models())
    return {
        "models": models,
        "context_window": {model: backend.context_window(model) for model in models},
        "default_max_output_tokens": {model: backend.default_max_output_tokens(model) for model in models},
        "reads_images": {model: backend.reads_images(model) for model in models},
        "reasoning_efforts": {model: backend.reasoning_efforts(model) for model in models},
        "hosted_tools": backend.hosted_tools(),
        "simulates_tools": backend.simulates_tools(),
        "parallel": backend.parallel(),
        "embeds": isinstance(backend, Embeds),
    }


async def serve_backends(backends: list[Backend], path: Path) -> None:
    """Serve ``backends`` on the UNIX socket at ``path`` until cancelled."""

    async def connected(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            await _answer(backends, reader, writer)
        except (asyncio.IncompleteReadError, ConnectionError):
            pass  # the worker went
        finally:
            writer.close()
            with suppress(ConnectionError):
                await writer.wait_closed()

    server = await asyncio.start_unix_server(connected, path=str(path))
    try:
        await server.serve_forever()
    finally:
        for backend in backends:
            await backend.aclose()


async def _answer(backends: list[Backend], reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    what, index, *arguments = await receive(reader)
    backend = backends[index]
    try:
        if what == "describe":
            await send(writer, ("ok", [description(each) for each in backends]))
        elif what == "capabilities":
            await send(writer, ("ok", await backend.capabilities()))
        elif what == "count_tokens":
            await send(writer, ("ok", await backend.count_tokens(*arguments)))
        elif what == "embed" and isinstance(backend, Embeds):
            await send(writer, ("ok", await backend.embed(*arguments)))
        elif what == "stream":
            await _stream(backend, arguments[0], reader, writer)
        else:
            raise ValueError(f"the model process cannot {what!r}")
    except Exception as error:  # the worker raises it as its own
        await send(writer, ("error", _picklable(error)))


async def _stream(backend: Backend, request: Any, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    """The generation's batches, until its Finish; stopped when the worker closes the connection."""
    generating = asyncio.current_task()
    assert generating is not None
    gone = asyncio.ensure_future(reader.read(1))  # the worker sends nothing more: b"" when it closes

    def stop(_: object) -> None:
        generating.cancel()

    gone.add_done_callback(stop)
    try:
        async with backend.stream(request) as batches:
            await send(writer, ("ok", None))
            async for batch in batches:
                await send(writer, ("events", batch))
        await send(writer, ("end", None))
    finally:
        gone.remove_done_callback(stop)
        gone.cancel()


def _picklable(error: Exception) -> Exception:
    try:
        pickle.loads(pickle.dumps(error))
    except Exception:
        return RuntimeError(f"{type(error).__name__}: {error}")
    return error
