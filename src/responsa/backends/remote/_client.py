"""A worker's side: each backend the model process holds, as a :class:`Backend` here. What does not
change (models, windows, slots) is read once at start; each call opens a connection of its own (a
local socket: microseconds), so a generation ends, or is cancelled, by closing it."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from responsa.protocol import Capability, ModelError

from .._base import Backend, ModelEvent, ModelRequest
from ._wire import receive, send

__all__ = ["RemoteBackend", "remote_backends"]


async def remote_backends(path: Path) -> list[Backend]:
    """Every backend the model process at ``path`` serves, in its order."""
    described = await _ask(path, ("describe", 0))
    return [(EmbeddingRemoteBackend if each["embeds"] else RemoteBackend)(path, index, each)
            for index, each in enumerate(described)]  # fmt: skip


class RemoteBackend(Backend):
    """One backend of the model process."""

    def __init__(self, path: Path, index: int, described: dict[str, Any]) -> None:
        self._path, self._index, self._described = path, index, described

    def models(self) -> Sequence[str]:
        return list(self._described["models"])

    def context_window(self, model: str) -> int | None:
        window: int | None = self._described["context_window"][model]
        return window

    def default_max_output_tokens(self, model: str) -> int | None:
        tokens: int | None = self._described["default_max_output_tokens"][model]
        return tokens

    def reads_images(self, model: str) -> bool:
        return bool(self._described["reads_images"][model])

    def reasoning_efforts(self, model: str) -> tuple[tuple[str, ...], str | None]:
        efforts, default = self._described["reasoning_efforts"][model]
        return tuple(efforts), default

    def hosted_tools(self) -> frozenset[str]:
        return frozenset(self._described["hosted_tools"])

    def simulates_tools(self) -> bool:
        return bool(self._described["simulates_tools"])

    def parallel(self) -> int | None:
        slots: int | None = self._described["parallel"]
        return slots

    async def capabilities(self) -> list[Capability]:
        found: list[Capability] = await _ask(self._path, ("capabilities", self._index))
        return found

    async def count_tokens(self, request: ModelRequest) -> int:
        return int(await _ask(self._path, ("count_tokens", self._index, request)))

    @asynccontextmanager
    async def stream(self, request: ModelRequest) -> AsyncIterator[AsyncIterator[list[ModelEvent]]]:
        reader, writer = await _connect(self._path)
        try:
            await send(writer, ("stream", self._index, request))
            await _answer(reader)  # started: the backend took the request (or its refusal is raised here)
            yield _batches(reader)
        finally:
            writer.close()  # the model process stops generating, if it still is

    async def aclose(self) -> None:
        return None


class EmbeddingRemoteBackend(RemoteBackend):
    """A backend of the model process that makes embeddings (``Embeds``)."""

    async def embed(self, model: str, texts: Sequence[str]) -> list[list[float]]:
        vectors: list[list[float]] = await _ask(self._path, ("embed", self._index, model, list(texts)))
        return vectors


async def _batches(reader: asyncio.StreamReader) -> AsyncIterator[list[ModelEvent]]:
    while True:
        kind, value = await _frame(reader)
        if kind == "end":
            return
        if kind == "error":
            raise value
        yield value


async def _ask(path: Path, question: tuple[Any, ...]) -> Any:
    reader, writer = await _connect(path)
    try:
        await send(writer, question)
        return await _answer(reader)
    finally:
        writer.close()


async def _answer(reader: asyncio.StreamReader) -> Any:
    kind, value = await _frame(reader)
    if kind == "error":
        raise value
    return value


async def _frame(reader: asyncio.StreamReader) -> tuple[str, Any]:
    try:
        kind, value = await receive(reader)
    except (asyncio.IncompleteReadError, ConnectionError) as gone:
        raise ModelError("The model process went away mid-request (it is being restarted).") from gone
    return kind, value


async def _connect(path: Path) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
    try:
        return await asyncio.open_unix_connection(str(path), limit=2**24)
    except OSError as error:
        raise ModelError(f"The model process does not answer ({error}); it is being restarted.") from error
