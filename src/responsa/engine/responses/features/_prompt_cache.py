"""``prompt_cache_options`` (openai 3.57): whether a request's prefix may be reused, and the diagnosis
of why it would not be, against a stored response the client names (``comparison_response_id``).

responsa's caches hold whole prefixes: the embedded model's decode slots keep the tokens they last
read (a request takes the slot sharing the longest prefix), and an upstream worker's own prefix cache
is reached by sending the same ``prompt_cache_key`` to the same worker. The diagnosis compares what
decides reuse, in the order a prefix is read: the model, the key, the tools, the output format, the
reasoning effort, the verbosity, the service tier, then the context item by item.

A request feature (``_features``): a request with ``prompt_cache_options`` gets the options echoed as
applied, its diagnosis where it names a response to compare with, and each model request told whether
it may read a cached prefix; with ``prewarm``, the model reads the prompt into its cache in place of
an answer."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from typing import Any

from responsa.backends import Backend, Finish, ModelRequest, TokenUsage, estimate_tokens
from responsa.protocol import Compaction, ContentPart, CreateResponseRequest, Item, ResponseObject, dump_dict
from responsa.store import Store

from ._features import Answer, FeatureRun

__all__ = ["PromptCacheFeature", "diagnose", "echoed_options", "reuses_prefix", "warm"]


class PromptCacheFeature:
    """``prompt_cache_options``: named by a request that sets it."""

    name = "prompt_cache_options"
    items: frozenset[type] = frozenset()
    fields: frozenset[str] = frozenset({"prompt_cache_options"})

    def open(self, request: CreateResponseRequest, context_types: frozenset[type]) -> FeatureRun | None:
        return _PromptCacheRun(request) if request.prompt_cache_options is not None else None


class _PromptCacheRun(FeatureRun):
    def __init__(self, request: CreateResponseRequest) -> None:
        self._request = request
        self._diagnostics: dict[str, Any] | None = None

    async def plan(
        self, store: Store, request: CreateResponseRequest, context: Sequence[Item]
    ) -> CreateResponseRequest:
        self._request = request  # as a configuration update in the context left it
        self._diagnostics = await diagnose(store, request, context)
        return request

    def begin(self, response: ResponseObject) -> None:
        response.prompt_cache_options = echoed_options(self._request)
        if self._diagnostics is not None:
            response.prompt_cache_diagnostics = self._diagnostics

    async def answer(
        self, backend: Backend, context: list[Item], build: Callable[[list[Item]], ModelRequest]
    ) -> Answer | None:
        """``prewarm`` ("overrides the generate field to false"): the model reads the context, writes
        nothing kept."""
        options = self._request.prompt_cache_options
        return Answer(usage=await warm(backend, build(context))) if options is not None and options.prewarm else None

    def shape(self, model: ModelRequest, input_items: Sequence[Item]) -> None:
        model.reuse_prefix = reuses_prefix(self._request, input_items)


def reuses_prefix(request: CreateResponseRequest, input_items: Sequence[Item]) -> bool:
    """Whether the request may read a cached prefix: always, but in ``explicit`` mode without any
    ``prompt_cache_breakpoint`` in its input (OpenAI: "the request does not use prompt caching")."""
    options = request.prompt_cache_options
    if options is None or options.mode == "implicit":
        return True
    return any(_breakpoint(part) for item in input_items for part in _parts(item))


def echoed_options(request: CreateResponseRequest) -> dict[str, Any] | None:
    """The options applied, as the response reports them."""
    options = request.prompt_cache_options
    if options is None:
        return None
    return {"mode": options.mode, "ttl": options.ttl, "comparison_response_id": options.comparison_response_id}


async def warm(backend: Backend, request: ModelRequest) -> TokenUsage:
    """``prewarm``: the model reads the request (its context, instructions and tools) into its cache,
    as the turn that follows will; the one token it is let write is dropped. Its usage is the
    prewarm's."""
    usage = TokenUsage(0, 0)
    async with backend.stream(dataclasses.replace(request, max_output_tokens=1, streaming=False)) as events:
        async for batch in events:
            usage = next((event.usage for event in batch if isinstance(event, Finish)), usage)
    return usage


async def diagnose(store: Store, request: CreateResponseRequest, context: Sequence[Item]) -> dict[str, Any] | None:
    """``prompt_cache_diagnostics`` for a request naming a ``comparison_response_id`` (None otherwise):
    a hit when the compared response's whole prompt is a prefix of this one's under the same settings,
    else a miss with its first reason and the tokens after the divergence."""
    options = request.prompt_cache_options
    if options is None or options.comparison_response_id is None:
        return None
    compared = await store.get_response(options.comparison_response_id)
    if compared is None:
        return {"type": "comparison_response_not_found"}
    if not reuses_prefix(request, context):
        return {"type": "unavailable"}
    theirs = await _prompt_of(store, compared)
    ours_tokens = _tokens(request.model, request.instructions, context)
    changed = _changed_setting(request, compared)
    if changed is None and request.instructions != compared.instructions:
        changed = "input_changed"
    if changed is not None:
        return _miss(changed, ours_tokens, 0)
    shared = _shared_length(theirs, context)
    if shared == len(theirs):
        return {"type": "cache_hit"}
    compacted = any(isinstance(item, Compaction) for item in context[shared:])
    reusable = _tokens(request.model, request.instructions, theirs[:shared])
    missed = ours_tokens - _tokens(request.model, request.instructions, context[:shared])
    return _miss("context_compacted" if compacted else "input_changed", missed, reusable)


def _miss(reason: str, missed: int, reusable: int) -> dict[str, Any]:
    return {"type": "cache_miss", "reason": reason, "cache_missed_tokens": missed,
            "comparison_reusable_tokens": reusable}  # fmt: skip


def _changed_setting(request: CreateResponseRequest, compared: ResponseObject) -> str | None:
    """The first setting read before the context that differs from the compared response's."""
    text = request.text
    theirs_text = compared.text
    effort = request.reasoning.effort if request.reasoning else None
    theirs_effort = compared.reasoning.effort if compared.reasoning else None
    checks = (
        ("model_changed", request.model, compared.model),
        ("prompt_cache_key_changed", request.prompt_cache_key, compared.prompt_cache_key),
        ("tools_changed", [dump_dict(tool) for tool in request.tools], [dump_dict(tool) for tool in compared.tools]),
        ("text_format_changed", _format(text), _format(theirs_text)),
        ("reasoning_effort_changed", effort, theirs_effort),
        ("verbosity_changed", text.verbosity if text else None, theirs_text.verbosity if theirs_text else None),
        ("service_tier_changed", request.service_tier or "default", compared.service_tier or "default"),
    )
    return next((reason for reason, ours, theirs in checks if ours != theirs), None)


def _format(text: Any) -> Any:
    return dump_dict(text.format) if text is not None else {"type": "text"}


async def _prompt_of(store: Store, compared: ResponseObject) -> list[Item]:
    """What the compared response's model read: its context without its own output."""
    context = await store.load_context(compared.id) or []
    return context[: len(context) - len(compared.output)]


def _shared_length(theirs: Sequence[Item], ours: Sequence[Item]) -> int:
    """How many leading items the two contexts share, compared as the model reads them (ids aside)."""
    shared = 0
    for left, right in zip(theirs, ours, strict=False):
        if _read(left) != _read(right):
            break
        shared += 1
    return shared


def _read(item: Item) -> dict[str, Any]:
    seen = dump_dict(item)
    for key in ("id", "status"):
        seen.pop(key, None)
    return seen


def _tokens(model: str, instructions: str | None, items: Sequence[Item]) -> int:
    return estimate_tokens(ModelRequest(model=model, instructions=instructions, items=items))


def _parts(item: Item) -> Sequence[ContentPart]:
    content = getattr(item, "content", None)
    return content if isinstance(content, list) else ()


def _breakpoint(part: Any) -> bool:
    return bool((getattr(part, "model_extra", None) or {}).get("prompt_cache_breakpoint"))
