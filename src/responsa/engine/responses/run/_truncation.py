"""``truncation: "auto"``: when the context does not fit the model's window, drop its oldest items.

Items go in whole groups, oldest first: a tool call goes with its output (same ``call_id``) and a
reasoning item with the item it led to, so the model never reads half an exchange. ``instructions``
are not items and always stay; the newest group (this request's last input) always stays. Counting
is the backend's own (llama.cpp's tokenizer for the embedded model), so what is kept really fits.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence

from responsa.backends import Backend, ModelRequest
from responsa.protocol import CreateResponseRequest, Item, Reasoning

__all__ = ["fit_context", "item_groups", "token_counter", "truncated"]

DEFAULT_RESERVE = 512
"""Tokens kept free for the answer when the request sets no ``max_output_tokens``."""


def item_groups(items: Sequence[Item]) -> list[list[Item]]:
    """``items`` in droppable groups, oldest first."""
    groups: list[list[Item]] = []
    by_call: dict[str, list[Item]] = {}
    pending: list[Item] = []  # reasoning waiting for the item it belongs to
    for item in items:
        if isinstance(item, Reasoning):
            pending.append(item)
            continue
        call_id = getattr(item, "call_id", None)
        if isinstance(call_id, str) and call_id in by_call:
            by_call[call_id] += [*pending, item]
        else:
            group = [*pending, item]
            groups.append(group)
            if isinstance(call_id, str):
                by_call[call_id] = group
        pending = []
    if pending:
        groups.append(pending)
    return groups


async def fit_context(
    items: Sequence[Item],
    count: Callable[[list[Item]], Awaitable[int]],
    window: int,
    reserve: int | None,
) -> list[Item]:
    """The newest suffix of ``items`` (in whole groups) whose model request, counted by ``count``,
    leaves ``reserve`` tokens of ``window`` for the answer; everything but the last group if
    nothing shorter fits (the backend then says the input is too long)."""
    room = window - (reserve if reserve is not None else min(DEFAULT_RESERVE, window // 8))
    groups = item_groups(items)
    if len(groups) <= 1 or await count(list(items)) <= room:
        return list(items)

    def kept(dropped: int) -> list[Item]:
        return [item for group in groups[dropped:] for item in group]

    low, high = 1, len(groups) - 1  # fewest groups to drop, searched: dropping more never adds tokens
    while low < high:
        middle = (low + high) // 2
        if await count(kept(middle)) <= room:
            high = middle
        else:
            low = middle + 1
    return kept(low)


def token_counter(
    backend: Backend, build: Callable[[list[Item]], ModelRequest]
) -> Callable[[list[Item]], Awaitable[int]]:
    """Counts, by ``backend``, the input tokens of the model request ``build`` makes of a context."""

    async def count(items: list[Item]) -> int:
        return await backend.count_tokens(build(items))

    return count


async def truncated(
    request: CreateResponseRequest, backend: Backend, items: list[Item], count: Callable[[list[Item]], Awaitable[int]]
) -> list[Item]:
    """``items`` as the model will read them: fitted to its window under ``truncation: auto`` when the
    backend knows the window, else unchanged. ``count`` counts a context's tokens (see token_counter)."""
    window = backend.context_window(request.model) if request.truncation == "auto" else None
    if window is None:
        return items
    return await fit_context(items, count, window, request.max_output_tokens)
