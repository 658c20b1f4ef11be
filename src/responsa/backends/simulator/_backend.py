"""The simulator: a zero-cost model that behaves like one, for testing agents and the server itself.

Deterministic for a given ``seed`` (or at ``temperature`` 0). It writes prose about the prompt,
calls function tools as ``tool_choice`` allows with arguments valid for their schema, answers from
``function_call_output`` items, emits JSON valid for ``text.format`` and stops at
``max_output_tokens`` and ``stop``. ``x-responsa-fault`` injects failures on request.
"""

from __future__ import annotations

import hashlib
import json
import random
import re
import secrets
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass

import anyio
import anyio.lowlevel

from responsa.backends._base import (
    Backend,
    Finish,
    FinishReason,
    ModelEvent,
    ModelRequest,
    TextDelta,
    TokenUsage,
    ToolCallDelta,
)
from responsa.protocol import (
    FunctionCall,
    FunctionCallOutput,
    InvalidRequest,
    JsonObjectFormat,
    JsonSchemaFormat,
    Message,
    ModelError,
    RateLimited,
    ServiceUnavailable,
    item_text,
    new_id,
)

from ._schema import Hints, instance_for
from ._text import count_tokens, prose, split_tokens
from ._tools import PlannedCall, plan_tool_calls

__all__ = ["FAULTS", "SIMULATOR_MODELS", "SimulatorBackend"]

SIMULATOR_MODELS: tuple[str, ...] = ("sim", "sim-large")
FAULTS = frozenset({"rate_limit", "server_error", "unavailable", "mid_stream"})
_ITEM_OVERHEAD_TOKENS = 3
_REPLY_WITH = re.compile(r"(?:reply|respond|answer)\s+with\s*[:\-]?\s*(.+)", re.IGNORECASE | re.DOTALL)


@dataclass(frozen=True)
class _Turn:
    """What the model is answering: the last user text and any tool results (call, output) after it."""

    prompt: str
    tool_results: list[tuple[str, str]]


class SimulatorBackend(Backend):
    """Serves :data:`SIMULATOR_MODELS`; needs no weights, network or GPU.

    ``token_delay`` (seconds) paces every token, so streaming, cancellation and disconnects can be
    watched in real time.
    """

    def __init__(self, token_delay: float = 0.0) -> None:
        self._token_delay = token_delay

    def models(self) -> Sequence[str]:
        return SIMULATOR_MODELS

    @asynccontextmanager
    async def stream(self, request: ModelRequest) -> AsyncIterator[AsyncIterator[ModelEvent]]:
        _raise_early_fault(request.fault)
        yield self._generate(request)

    async def _generate(self, request: ModelRequest) -> AsyncIterator[ModelEvent]:
        turn = _last_turn(request)
        rng, temperature = _rng_for(request, turn.prompt)
        input_tokens = _input_tokens(request)
        calls = plan_tool_calls(request, turn.prompt, answering_tool_output=bool(turn.tool_results))
        budget = request.max_output_tokens
        produced = 0
        fail_at = None
        if calls:
            pieces = [(i, c, tok) for i, c in enumerate(calls) for tok in split_tokens(c.arguments)]
            reason: FinishReason = "tool_calls"
            started: set[int] = set()
            for index, call, token in pieces:
                if budget is not None and produced >= budget:
                    reason = "length"
                    break
                yield _call_delta(index, call, token, first=index not in started)
                started.add(index)
                produced += 1
                await self._pace(produced)
        else:
            tokens = split_tokens(_answer_text(request, turn, rng, temperature))
            reason = "stop"
            if budget is not None and len(tokens) > budget:
                tokens, reason = tokens[:budget], "length"
            if request.fault == "mid_stream":
                fail_at = len(tokens) // 2
            for token in tokens:
                if produced == fail_at:
                    raise ModelError("The model failed while generating (injected mid_stream fault).")
                yield TextDelta(token)
                produced += 1
                await self._pace(produced)
        yield Finish(reason, TokenUsage(input_tokens=input_tokens, output_tokens=produced))

    async def _pace(self, produced: int) -> None:
        if self._token_delay > 0:
            await anyio.sleep(self._token_delay)
        elif produced % 32 == 0:
            await anyio.lowlevel.checkpoint()


def _raise_early_fault(fault: str | None) -> None:
    if fault is not None and fault not in FAULTS:
        raise InvalidRequest(
            f"Unknown fault {fault!r}; expected one of {sorted(FAULTS)}.",
            param="x-responsa-fault",
            code="invalid_value",
        )
    if fault == "rate_limit":
        raise RateLimited("Rate limit exceeded (injected fault).", headers={"retry-after": "1"})
    if fault == "server_error":
        raise ModelError("The model failed (injected fault).")
    if fault == "unavailable":
        raise ServiceUnavailable("No healthy worker is available (injected fault).")


def _call_delta(index: int, call: PlannedCall, token: str, first: bool) -> ToolCallDelta:
    if first:
        return ToolCallDelta(index=index, arguments=token, name=call.name, call_id=new_id("call"))
    return ToolCallDelta(index=index, arguments=token)


def _last_turn(request: ModelRequest) -> _Turn:
    calls = {item.call_id: f"{item.name}({item.arguments})" for item in request.items if isinstance(item, FunctionCall)}
    results: list[tuple[str, str]] = []
    for item in reversed(request.items):
        if isinstance(item, FunctionCallOutput):
            results.append((calls.get(item.call_id, "the tool"), item_text(item)))
        elif isinstance(item, Message) and item.role == "user":
            return _Turn(item_text(item), list(reversed(results)))
    return _Turn(request.instructions or "", list(reversed(results)))


def _rng_for(request: ModelRequest, prompt: str) -> tuple[random.Random, float]:
    temperature = 1.0 if request.sampling.temperature is None else request.sampling.temperature
    if request.sampling.seed is None and temperature > 0:
        return random.Random(secrets.randbits(64)), temperature
    digest = hashlib.sha256(f"{request.sampling.seed}\x00{prompt}".encode()).digest()
    return random.Random(int.from_bytes(digest[:8], "big")), temperature


def _input_tokens(request: ModelRequest) -> int:
    total = count_tokens(request.instructions or "")
    for item in request.items:
        if isinstance(item, Message | FunctionCallOutput):
            total += count_tokens(item_text(item))
        elif isinstance(item, FunctionCall):
            total += count_tokens(item.name) + count_tokens(item.arguments)
        total += _ITEM_OVERHEAD_TOKENS
    for tool in request.tools:
        total += count_tokens(json.dumps(tool.model_dump(mode="json")))
    return total


def _answer_text(request: ModelRequest, turn: _Turn, rng: random.Random, temperature: float) -> str:
    fmt = request.text_format
    if isinstance(fmt, JsonSchemaFormat):
        return json.dumps(instance_for(fmt.schema_, Hints(text=turn.prompt)))
    text = _prose_answer(turn, rng, temperature)
    if isinstance(fmt, JsonObjectFormat):
        return json.dumps({"answer": text})
    for stop in request.sampling.stop:
        if stop and stop in text:
            text = text[: text.index(stop)]
    return text


def _prose_answer(turn: _Turn, rng: random.Random, temperature: float) -> str:
    if turn.tool_results:
        findings = " ".join(f"{name} returned: {output.strip()}." for name, output in turn.tool_results)
        return f"Here is what I found. {findings} Based on these results, that answers your request."
    literal = _REPLY_WITH.search(turn.prompt)
    if literal:
        return literal.group(1).strip().strip("\"'")
    return prose(turn.prompt, rng, temperature)
