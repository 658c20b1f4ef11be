"""The model request of a turn: what the backend sees of a run's context and output, under its
``tool_choice``, with its sampling and limits."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from responsa.backends import SAMPLING_NUMBERS, ModelRequest, Sampling
from responsa.protocol import Compaction, CreateResponseRequest, Item

from ...tools import after_forced_round, resolve_tool_choice
from ._run import RunContext

__all__ = ["FIRST_TURN", "Turn", "build_model_request", "template_kwargs"]


@dataclass(frozen=True)
class Turn:
    """What changes from one model turn of a run to the next."""

    calls_made: int = 0
    """Tool calls the server made so far in this response."""
    last: bool = False
    """The agentic loop's last round: the model may only answer."""
    choice_met: bool = False
    """The server has run a call a forced ``tool_choice`` asked for: the model now chooses freely."""
    output_tokens: int = 0
    """Output tokens the response's earlier turns spent (``max_output_tokens`` caps the response)."""


FIRST_TURN = Turn()


def build_model_request(ctx: RunContext, items: Sequence[Item], turn: Turn = FIRST_TURN) -> ModelRequest:
    """What the backend sees of ``items``: the context, callable tools under ``tool_choice``, sampling
    and limits.

    Once ``max_tool_calls`` is spent, or on the agentic loop's last round, the model may only answer
    in text. Hosted tools in ``ctx.unavailable`` (which the backend cannot run, or the server runs as
    tools of the plan) are left out.
    """
    request, tools = ctx.request, ctx.tools
    classes = frozenset(map(type, items))  # one scan of a long context, for what looks for a kind of item
    if Compaction in classes:  # the model reads their expansion instead (most contexts have none)
        items, classes = [item for item in items if not isinstance(item, Compaction)], classes - {Compaction}
    policy = resolve_tool_choice(after_forced_round(request) if turn.choice_met else request, tools, ctx.unavailable)
    mode, forced = policy.mode, policy.forced
    reasoning = request.reasoning
    calls_left = None if request.max_tool_calls is None else max(request.max_tool_calls - turn.calls_made, 0)
    if calls_left == 0 or turn.last:
        mode, forced = "none", None
    made = ModelRequest(
        model=request.model,
        instructions=request.instructions,
        items=ctx.replays.replayed(items, tools, classes),
        tools=policy.tools,
        hosted_tools=policy.hosted if mode != "none" else [],
        tool_mode=mode,
        forced_tool=forced,
        allowed_tools=policy.allowed,
        parallel_tool_calls=request.parallel_tool_calls,
        max_tool_calls=calls_left,
        text_format=request.text.format if request.text else None,
        max_output_tokens=None if request.max_output_tokens is None else request.max_output_tokens - turn.output_tokens,
        sampling=Sampling(
            **{name: getattr(request, name) for name in SAMPLING_NUMBERS},
            stop=tuple(request.stop_sequences),
            ignore_eos=bool(request.ignore_eos),
            include_stop=bool(request.include_stop_str_in_output),
        ),
        fault=ctx.fault,
        streaming=request.stream,
        reasoning_effort=reasoning.effort if reasoning else None,
        reasoning_summary=request.reasoning_summary,
        encrypted_reasoning="reasoning.encrypted_content" in (request.include or []),
        tool_grammars=tools.grammars(),
        logprobs=(request.top_logprobs or 0) if request.wants_logprobs else None,
        template_kwargs=template_kwargs(request),
        skip_special_tokens=request.skip_special_tokens is not False,
        cache_key=request.prompt_cache_key,
        end_user=request.user or request.safety_identifier,
        safety_identifier=request.safety_identifier,
    )
    for feature in ctx.features:  # what the request's features decide of each model request
        feature.shape(made, ctx.input_items)
    return made


def template_kwargs(request: CreateResponseRequest) -> dict[str, Any]:
    """``chat_template_kwargs`` as sent, with ``enable_thinking`` from ``reasoning.effort`` where the
    client did not set it: any effort but ``none`` thinks (as OpenVINO reads it)."""
    kwargs = dict(request.chat_template_kwargs or {})
    effort = request.reasoning.effort if request.reasoning else None
    if effort is not None and "enable_thinking" not in kwargs:
        kwargs["enable_thinking"] = effort != "none"
    return kwargs
