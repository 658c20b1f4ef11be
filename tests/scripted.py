"""A scripted backend: a model whose every turn the test writes, registered like any backend.

The simulator picks its calls by keyword; a test that must drive the server with given arguments (a
server-run kind's call, a failure at a given point) queues the turns here instead: text, tool calls
with their arguments, hosted calls, an error. Each model request the server makes is kept, so a test
can read what the model was shown. Served in process (``tests.in_process.in_process(settings,
backends=[...])``): objects cannot cross into the processes of ``--workers``.
"""

from __future__ import annotations

import time
from collections import deque
from collections.abc import AsyncIterator, Iterator, Sequence
from contextlib import asynccontextmanager
from pathlib import Path

import pytest

from responsa.backends import Backend, Finish, ModelEvent, ModelRequest, TextDelta, TokenUsage, ToolCallDelta
from responsa.config import Settings
from tests.in_process import InProcess, in_process

__all__ = ["ScriptedBackend", "call", "scripted", "scripted_module", "store_of", "text"]

USAGE = TokenUsage(input_tokens=10, output_tokens=5)


def text(answer: str) -> list[ModelEvent]:
    """A turn that answers ``answer`` and stops."""
    return [TextDelta(answer), Finish("stop", USAGE)]


def call(name: str, arguments: str, call_id: str = "call_scripted") -> list[ModelEvent]:
    """A turn that calls ``name`` with ``arguments`` (JSON) and ends for the tool."""
    return [ToolCallDelta(0, arguments, name=name, call_id=call_id), Finish("tool_calls", USAGE)]


class ScriptedBackend(Backend):
    """Serves ``model``: each model request takes the next queued turn (a list of events, or an
    exception raised instead); none left is a test's mistake, said as a failure."""

    def __init__(self, model: str = "scripted") -> None:
        self.model = model
        self.turns: deque[list[ModelEvent] | Exception] = deque()
        self.requests: list[ModelRequest] = []

    def models(self) -> Sequence[str]:
        return [self.model]

    @asynccontextmanager
    async def stream(self, request: ModelRequest) -> AsyncIterator[AsyncIterator[list[ModelEvent]]]:
        self.requests.append(request)
        turn = self.turns.popleft() if self.turns else RuntimeError("the script has no turn left")
        if isinstance(turn, Exception):
            raise turn

        async def events() -> AsyncIterator[list[ModelEvent]]:
            for event in turn:
                yield [event]

        yield events()


@pytest.fixture
def scripted(tmp_path: Path) -> Iterator[tuple[InProcess, ScriptedBackend]]:
    """An app in process whose model ``scripted`` is a fresh ``ScriptedBackend``."""
    model = ScriptedBackend()
    with in_process(Settings(db_url=f"sqlite:///{tmp_path / 'r.db'}"), backends=[model]) as app:
        yield app, model


@pytest.fixture(scope="module")
def scripted_module(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[InProcess, ScriptedBackend]]:
    """An app in process for the module whose model ``scripted`` is one ``ScriptedBackend`` (its turns and
    requests accumulate over the module's tests)."""
    model = ScriptedBackend()
    settings = Settings(db_url=f"sqlite:///{tmp_path_factory.mktemp('scripted') / 'r.db'}", embedded=False)
    with in_process(settings, backends=[model]) as app:
        yield app, model


def store_of(app: InProcess, *texts: tuple[str, bytes]) -> str:
    """A vector store of these (name, content) files, once the app's tasks have ingested them."""
    files = [app.sdk.files.create(file=named, purpose="assistants").id for named in texts]
    store = app.sdk.vector_stores.create(name="notes", file_ids=files)
    deadline = time.monotonic() + 30
    while app.sdk.vector_stores.retrieve(store.id).file_counts.in_progress:
        assert time.monotonic() < deadline
        time.sleep(0.02)
    return store.id
