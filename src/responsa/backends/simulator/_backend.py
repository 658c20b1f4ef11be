"""The simulator: a zero-cost model that behaves like one, for testing agents and the server itself.

Deterministic for a given ``seed`` (or at ``temperature`` 0). It writes prose about the prompt,
calls function tools as ``tool_choice`` allows with arguments valid for their schema, answers from
``function_call_output`` items, emits JSON valid for ``text.format`` and stops at
``max_output_tokens`` and ``stop``. ``x-responsa-fault`` injects failures on request.
"""

from __future__ import annotations

import base64
import hashlib
import json
import random
import re
import secrets
from collections.abc import AsyncIterator, Mapping, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass

import anyio
import anyio.lowlevel

from responsa.backends._base import (
    Backend,
    Finish,
    FinishReason,
    HiddenReasoning,
    ModelEvent,
    ModelRequest,
    ReasoningSummaryDelta,
    TextDelta,
    TokenUsage,
    ToolCallDelta,
    check_fits,
    one_at_a_time,
    read_texts,
    reasoning_text,
)
from responsa.backends._moderation import ModerationVerdict
from responsa.protocol import (
    FunctionCall,
    FunctionCallOutput,
    InvalidRequest,
    JsonObjectFormat,
    JsonSchemaFormat,
    Message,
    ModelError,
    RateLimited,
    Reasoning,
    ServiceUnavailable,
    item_text,
    new_id,
)

from ._delegation import delegated_answer, plan_delegation
from ._hosted import HOSTED_TYPES, describe, hosted_call
from ._logprobs import invent_logprobs
from ._moderation import MODERATION_MODEL, classify
from ._profiles import EFFORT_MULTIPLIERS, ModelProfile, default_profiles
from ._schema import Hints, instance_for
from ._text import count_tokens, extractive_summary, prose, reasoning_summary, split_tokens
from ._tools import PlannedCall, plan_tool_calls

__all__ = ["FAULTS", "SimulatorBackend"]

FAULTS = frozenset({"rate_limit", "server_error", "unavailable", "mid_stream", "timeout"})
SUMMARY_SHARE = {"concise": 0.05, "auto": 0.10, "detailed": 0.15}
_ITEM_OVERHEAD_TOKENS = 3
_REPLY_WITH = re.compile(r"(?:reply|respond|answer)\s+with\s*[:\-]?\s*(.+)", re.IGNORECASE | re.DOTALL)


@dataclass(frozen=True)
class _Turn:
    """What the model is answering: the last user text and any tool results (call, output) after it."""

    prompt: str
    tool_results: list[tuple[str, str]]


class SimulatorBackend(Backend):
    """Serves the simulated models; needs no weights, network or GPU.

    Each model has a latency profile (time to first token, tokens per second, jitter) applied in
    real time unless ``latency`` is off; ``token_delay`` (seconds), when set, paces every token of
    every model instead. Reasoning models spend hidden reasoning tokens by ``reasoning.effort``.
    ``fault_rate`` injects the ``faults`` at random, besides the per-request ``x-responsa-fault``.
    """

    def __init__(
        self,
        token_delay: float = 0.0,
        profiles: Mapping[str, ModelProfile] | None = None,
        latency: bool = True,
        fault_rate: float = 0.0,
        faults: Sequence[str] = ("rate_limit", "server_error", "unavailable", "mid_stream"),
        timeout_after: float = 60.0,
    ) -> None:
        self._token_delay = token_delay
        self._profiles = dict(profiles if profiles is not None else default_profiles())
        self._latency = latency
        self._fault_rate = fault_rate
        self._faults = tuple(faults)
        self._timeout_after = timeout_after
        self._chance = random.Random()

    def models(self) -> Sequence[str]:
        return list(self._profiles)

    def moderation_models(self) -> Sequence[str]:
        return (MODERATION_MODEL,)

    async def moderate(self, model: str, texts: Sequence[str]) -> list[ModerationVerdict]:
        return [classify(text) for text in texts]

    def hosted_tools(self) -> frozenset[str]:
        return HOSTED_TYPES

    def simulates_tools(self) -> bool:
        return True

    def summarize(self, transcript: str) -> tuple[str, TokenUsage] | None:
        summary = extractive_summary(transcript)
        return summary, TokenUsage(input_tokens=count_tokens(transcript), output_tokens=count_tokens(summary))

    async def count_tokens(self, request: ModelRequest) -> int:
        return _input_tokens(request)

    def context_window(self, model: str) -> int | None:
        profile = self._profiles.get(model)
        return profile.context_window if profile is not None else None

    def reasoning_efforts(self, model: str) -> tuple[tuple[str, ...], str | None]:
        profile = self._profiles.get(model)
        if profile is None or not profile.reasoning:
            return (), None
        return tuple(sorted(profile.efforts, key=list(EFFORT_MULTIPLIERS).index)), profile.default_effort

    @asynccontextmanager
    async def stream(self, request: ModelRequest) -> AsyncIterator[AsyncIterator[list[ModelEvent]]]:
        profile = self._profiles[request.model]
        _check_window(request, profile)
        effort = _effort(profile, request.reasoning_effort)
        fault = request.fault
        if fault is None and self._fault_rate and self._chance.random() < self._fault_rate:
            fault = self._chance.choice(self._faults)
        _raise_early_fault(fault)
        if fault == "timeout":
            # The model never answers; after a long wait the request fails like a timed-out upstream.
            await anyio.sleep(self._timeout_after)
            raise ModelError(f"The model did not answer within {self._timeout_after:g}s.", code="timeout")
        yield one_at_a_time(self._generate(request, profile, effort, fault))

    async def _generate(
        self, request: ModelRequest, profile: ModelProfile, effort: str, fault: str | None
    ) -> AsyncIterator[ModelEvent]:
        turn = _last_turn(request)
        rng, temperature = _rng_for(request, turn.prompt)
        input_tokens = _input_tokens(request)
        delegation = plan_delegation(request, turn.prompt, turn.tool_results)
        calls = delegation if delegation is not None else plan_tool_calls(
            request, turn.prompt, answering_tool_output=bool(turn.tool_results))  # fmt: skip
        budget = request.max_output_tokens
        await self._wait(profile.ttft_ms / 1000, profile)
        hosted = None if calls or turn.tool_results else hosted_call(request, turn.prompt)
        answer = (describe(hosted) if hosted else "") + _answer_text(request, turn, rng, temperature)
        visible: list[TextDelta | ToolCallDelta] = (
            _call_deltas(calls) if calls else _text_deltas(split_tokens(answer), request.logprobs, rng)
        )
        thinking = round(EFFORT_MULTIPLIERS[effort] * len(visible)) if profile.reasoning else 0
        if budget is not None:
            thinking = min(thinking, budget)
        produced = thinking
        if thinking:
            async for event in self._reason(request, profile, effort, thinking, rng):
                yield event
        if hosted is not None:
            yield hosted
        reason: FinishReason = "tool_calls" if calls else "stop"
        fail_at = len(visible) // 2 if fault == "mid_stream" else None
        for position, delta in enumerate(visible):
            if budget is not None and produced >= budget:
                reason = "length"
                break
            if position == fail_at:
                raise ModelError("The model failed while generating (injected mid_stream fault).")
            yield delta
            produced += 1
            await self._pace(produced, profile)
        usage = TokenUsage(input_tokens=input_tokens, output_tokens=produced, reasoning_tokens=thinking)
        yield Finish(reason, usage)

    async def _reason(
        self, request: ModelRequest, profile: ModelProfile, effort: str, tokens: int, rng: random.Random
    ) -> AsyncIterator[ModelEvent]:
        """Hidden reasoning: its time passes, a summary shows when asked for (5/10/15% of its tokens)."""
        blob = _encrypted_reasoning(request.model, effort, tokens) if request.encrypted_reasoning else None
        yield HiddenReasoning(encrypted_content=blob)
        words = round(tokens * SUMMARY_SHARE.get(request.reasoning_summary or "", 0.0))
        summary = split_tokens(reasoning_summary(_last_turn(request).prompt, words, rng)) if words else []
        per_word = (tokens - len(summary)) / max(len(summary), 1)
        if not summary:
            await self._wait(tokens / profile.tokens_per_second if profile.tokens_per_second else 0, profile)
        for piece in summary:
            yield ReasoningSummaryDelta(piece)
            await self._wait(per_word / profile.tokens_per_second if profile.tokens_per_second else 0, profile)

    async def _wait(self, seconds: float, profile: ModelProfile) -> None:
        if self._latency and seconds > 0:
            spread = 1 + profile.jitter * (2 * self._chance.random() - 1)
            await anyio.sleep(seconds * spread)
        else:
            await anyio.lowlevel.checkpoint()

    async def _pace(self, produced: int, profile: ModelProfile) -> None:
        if self._token_delay > 0:
            await anyio.sleep(self._token_delay)
        elif self._latency and profile.tokens_per_second:
            await self._wait(1 / profile.tokens_per_second, profile)
        elif produced % 32 == 0:
            await anyio.lowlevel.checkpoint()


def _effort(profile: ModelProfile, asked: str | None) -> str:
    """The effort to simulate; 400 for one the model does not take (seed 003: minimal is GPT-5 only,
    xhigh GPT-5.2 only)."""
    if not profile.reasoning:
        return "none"
    effort = asked or profile.default_effort
    if effort not in profile.efforts:
        raise InvalidRequest(
            f"Reasoning effort '{effort}' is not supported by model '{profile.name}'; "
            f"use one of {sorted(profile.efforts, key=list(EFFORT_MULTIPLIERS).index)}.",
            param="reasoning.effort",
            code="unsupported_value",
        )
    return effort


def _encrypted_reasoning(model: str, effort: str, tokens: int) -> str:
    """An opaque blob standing for the hidden reasoning; clients pass it back unchanged."""
    payload = json.dumps({"model": model, "effort": effort, "reasoning_tokens": tokens, "nonce": secrets.token_hex(8)})
    return "gAAAA" + base64.urlsafe_b64encode(payload.encode()).decode()


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


def _text_deltas(tokens: list[str], logprobs: int | None, rng: random.Random) -> list[TextDelta | ToolCallDelta]:
    if logprobs is None:
        return [TextDelta(token) for token in tokens]
    return [TextDelta(token, (invent_logprobs(token, logprobs, rng),)) for token in tokens]


def _call_deltas(calls: list[PlannedCall]) -> list[TextDelta | ToolCallDelta]:
    """Each call's arguments token by token; the first piece carries its name and a new call id."""
    deltas: list[TextDelta | ToolCallDelta] = []
    for index, call in enumerate(calls):
        for position, token in enumerate(split_tokens(call.arguments)):
            first = position == 0
            deltas.append(
                ToolCallDelta(
                    index=index,
                    arguments=token,
                    name=call.name if first else None,
                    call_id=new_id("call") if first else None,
                )
            )
    return deltas


def _last_turn(request: ModelRequest) -> _Turn:
    calls = {item.call_id: f"{item.name}({item.arguments})" for item in request.items if isinstance(item, FunctionCall)}
    results: list[tuple[str, str]] = []
    for item in reversed(request.items):
        if isinstance(item, FunctionCallOutput):
            results.append((calls.get(item.call_id, "the tool"), item_text(item)))
        elif isinstance(item, Message) and (item.model_extra or {}).get("answers_call") in calls:  # an async result
            results.append((calls[item.model_extra["answers_call"]], item_text(item).partition("\n")[2]))  # type: ignore[index]
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
        total += sum(map(count_tokens, read_texts(item))) + _ITEM_OVERHEAD_TOKENS
        if request.reads_reasoning and isinstance(item, Reasoning):  # shown back: reasoning.context
            total += count_tokens(reasoning_text(item))
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
    sampling = request.sampling
    budget = request.max_output_tokens
    if sampling.ignore_eos and budget:  # a model that may not stop goes on past the budget, so it runs out
        more = text
        while count_tokens(text) <= budget:
            text += " " + more
    hits = [(text.index(stop), stop) for stop in sampling.stop if stop and stop in text]
    if hits:
        at, stop = min(hits)
        text = text[: at + (len(stop) if sampling.include_stop else 0)]
    return text


def _prose_answer(turn: _Turn, rng: random.Random, temperature: float) -> str:
    delegated = delegated_answer(turn.tool_results)
    if delegated is not None:
        return delegated
    if turn.tool_results:
        findings = " ".join(f"{name} returned: {output.strip()}." for name, output in turn.tool_results)
        return f"Here is what I found. {findings} Based on these results, that answers your request."
    literal = _REPLY_WITH.search(turn.prompt)
    if literal:
        return literal.group(1).strip().strip("\"'")
    return prose(turn.prompt, rng, temperature)


def _check_window(request: ModelRequest, profile: ModelProfile) -> None:
    """400 when the input and ``max_output_tokens`` do not fit the model's context window, as real models say."""
    window = profile.context_window
    if window is None:
        return
    check_fits(_input_tokens(request), request.max_output_tokens, window)
