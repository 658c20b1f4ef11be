"""Steering (``response.steer``, sent on the WebSocket), for every model: the engine's part; the
socket only reads the messages and frames these events.

The client sends ``{"type": "response.steer", "previous_response_id": <a response running on this
connection>, "input": str | [user messages]}``. The server owns the input from
``response.steer.accepted`` on; the running response stops at the next safe point (between the
model's outputs, or as a server call is cut) and ends ``incomplete`` with reason ``steered``, and a
successor starts by itself on the same lane: the steered response's settings, chained to it by
``previous_response_id``, with the steering input as its input. Its ``response.created`` commits
the input. A response that ends waiting for the client (its tool calls, an approval) keeps the input
queued and says so with ``response.steer.pending`` (its ``required_input`` stubs) after it ends; the
client's next ``response.create`` continuing it gets the input prepended. Input that cannot be taken
or committed comes back in ``response.steer.failed``. Steer events carry ``sequence_number`` 0, as
error messages do: they are the connection's, not the response's.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from responsa.protocol import new_id

from ...tools.multi_agent import Inbox
from ..features._features import client_inbox
from ._run import Run

__all__ = [
    "MAX_STEERS",
    "Steer",
    "Steering",
    "inbox_of",
    "inject_created",
    "inject_failure",
    "steer_failure",
    "steer_input",
    "successor_create",
]

MAX_STEERS = 16
"""Steering inputs queued for one response at most (``too_many_pending_steers`` past it)."""
_MESSAGE_KEYS = frozenset({"type", "role", "content"})
_PART_TYPES = frozenset({"input_text", "input_image", "input_file"})


@dataclass
class Steer:
    """One accepted steering input, until a successor commits it."""

    target: str
    input: list[dict[str, Any]]
    id: str = field(default_factory=lambda: new_id("steer"))

    def accepted(self) -> dict[str, Any]:
        return _event("response.steer.accepted", steer={"id": self.id, "previous_response_id": self.target})

    def pending(self, required: list[dict[str, Any]]) -> dict[str, Any]:
        return _event("response.steer.pending", steer={"id": self.id, "previous_response_id": self.target},
                      reason="waiting_for_required_input", required_input=required)  # fmt: skip

    def failed(self, code: str, message: str) -> dict[str, Any]:
        return steer_failure(self.target, self.input, code, message, steer_id=self.id)


def steer_failure(target: Any, given: Any, code: str, message: str, steer_id: str | None = None) -> dict[str, Any]:
    """``response.steer.failed``, returning the input as it was sent (with its id once one was given)."""
    steer: dict[str, Any] = {"input": given, "previous_response_id": target}
    if steer_id is not None:
        steer["id"] = steer_id
    return _event("response.steer.failed", steer=steer,
                  error={"type": "invalid_request_error", "code": code, "message": message})  # fmt: skip


def inject_failure(target: Any, given: Any, code: str, message: str) -> dict[str, Any]:
    """``response.inject.failed`` (openai 3.57's beta WebSocket), returning the input as it was sent:
    ``response_already_completed`` for a response that ended on the connection, else
    ``response_not_found`` (no response running here takes injected input)."""
    return _event("response.inject.failed", response_id=target, input=given, error={"code": code, "message": message})


def inject_created(target: str) -> dict[str, Any]:
    """``response.inject.created``: the outputs are the response's (the agents waiting on them go on)."""
    return _event("response.inject.created", response_id=target)


def inbox_of(run: Run) -> Inbox | None:
    """Where the client's answers reach ``run`` while it runs (a hosted multi-agent response's)."""
    return client_inbox(run.ctx.features)


def _event(kind: str, **fields: Any) -> dict[str, Any]:
    return {"type": kind, "sequence_number": 0, **fields}


def steer_input(given: Any) -> list[dict[str, Any]] | None:
    """The steering input as user messages; None when it is not what steering takes (a string, or
    user messages of ``type``, ``role`` and ``content`` with text, image and file parts only)."""
    if isinstance(given, str) and given:
        return [{"role": "user", "content": given}]
    if not isinstance(given, list) or not given:
        return None
    for message in given:
        if not (isinstance(message, dict) and set(message) <= _MESSAGE_KEYS and message.get("role") == "user"):
            return None
        if message.get("type", "message") != "message" or not _content_ok(message.get("content")):
            return None
    return [dict(message) for message in given]


def _content_ok(content: Any) -> bool:
    if isinstance(content, str):
        return True
    return isinstance(content, list) and all(
        isinstance(part, dict) and part.get("type") in _PART_TYPES for part in content
    )


class Steering:
    """One connection's steering: which responses run now, the input queued for each, and the input
    held for a response that waits for the client."""

    def __init__(self) -> None:
        self.running: dict[str, tuple[Any, Run]] = {}
        """Response id to its lane and run, while it runs."""
        self._queued: dict[str, list[Steer]] = {}
        self._held: dict[str, list[Steer]] = {}

    def queue(self, target: str, given: list[dict[str, Any]]) -> Steer | str:
        """Accept input for a running response (and ask it to stop); else the failure's code."""
        running = self.running.get(target)
        if running is None:
            return "response_not_active"
        _lane, run = running
        if run.ctx.request.conversation_id is not None:
            return "steering_not_supported"
        queued = self._queued.setdefault(target, [])
        if len(queued) >= MAX_STEERS:
            return "too_many_pending_steers"
        steer = Steer(target, given)
        queued.append(steer)
        run.stop("steered")
        return steer

    def interrupt(self, target: str) -> bool:
        """Codex's instant interrupt of a response running on this connection (it ends ``incomplete``,
        reason ``interrupted``: see ``OutputBuilder.interrupted``); False where none runs."""
        running = self.running.get(target)
        if running is None:
            return False
        running[1].stop("interrupted")
        return True

    def take(self, response_id: str) -> list[Steer]:
        """The input accepted while ``response_id`` ran, now that it has ended."""
        return self._queued.pop(response_id, [])

    def hold(self, response_id: str, steers: list[Steer]) -> None:
        """Keep input for the client's own continuation of ``response_id`` (it waits for the client)."""
        self._held.setdefault(response_id, []).extend(steers)

    def release(self, previous: str | None) -> list[Steer]:
        """Input held for a continuation of ``previous``, to go before its own input."""
        return self._held.pop(previous, []) if previous is not None else []


def successor_create(message: dict[str, Any], steered: str, steers: list[Steer]) -> dict[str, Any]:
    """The ``response.create`` of a steered response's successor: its settings, continuing it, with
    the steering input (in the order it was accepted) as its input."""
    inherited = {key: value for key, value in message.items() if key not in ("input", "generate")}
    return {**inherited, "previous_response_id": steered, "input": [part for steer in steers for part in steer.input]}
