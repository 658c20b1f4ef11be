"""Moderation by an upstream: OpenAI's ``POST /moderations`` (OpenAI itself, or a server that serves
that route), or a guard model such as Llama Guard served by Chat Completions (vLLM, SGLang, Ollama),
which reads the text as a user turn and answers ``safe`` or ``unsafe`` with its hazard codes."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any

import aiohttp

from responsa.backends._moderation import ModerationVerdict, from_guard_answer, from_openai_result
from responsa.protocol import ModelError

from ._workers import Worker

if TYPE_CHECKING:
    from ._backend import UpstreamModel

__all__ = ["moderate"]

_GUARD_TOKENS = 20
"""Enough for ``unsafe`` and a list of codes."""


async def moderate(
    session: aiohttp.ClientSession, workers: Iterable[Worker], served: UpstreamModel, texts: Sequence[str]
) -> list[ModerationVerdict]:
    """One verdict per text, from the first worker that answers."""
    headers = {"authorization": f"Bearer {served.api_key}"} if served.api_key else {}
    name = served.upstream_model or served.name
    failure = "no healthy worker"
    for worker in workers:
        try:
            if served.moderation == "openai":
                return await _openai(session, worker, name, texts, headers)
            return [await _guard(session, worker, name, text, headers) for text in texts]
        except _Unanswered as exc:
            failure = str(exc)
        except (aiohttp.ClientError, TimeoutError, ValueError, KeyError, IndexError, TypeError) as exc:
            failure = repr(exc)
    raise ModelError(f"The upstream could not moderate with '{served.name}': {failure}", code="moderation_failed")


class _Unanswered(Exception):
    """A worker answered with an error status."""


async def _openai(
    session: aiohttp.ClientSession, worker: Worker, model: str, texts: Sequence[str], headers: dict[str, str]
) -> list[ModerationVerdict]:
    async with session.post(f"{worker.url}/moderations", json={"model": model, "input": list(texts)},
                            headers=headers) as reply:  # fmt: skip
        body = await _answer(reply)
    results = body["results"]
    if len(results) != len(texts):
        raise ValueError(f"{len(results)} results for {len(texts)} inputs")
    return [from_openai_result(result) for result in results]


async def _guard(
    session: aiohttp.ClientSession, worker: Worker, model: str, text: str, headers: dict[str, str]
) -> ModerationVerdict:
    body = {"model": model, "messages": [{"role": "user", "content": text}], "max_tokens": _GUARD_TOKENS,
            "temperature": 0, "stream": False}  # fmt: skip
    async with session.post(f"{worker.url}/chat/completions", json=body, headers=headers) as reply:
        answer = await _answer(reply)
    return from_guard_answer(answer["choices"][0]["message"]["content"] or "")


async def _answer(reply: aiohttp.ClientResponse) -> Any:
    if reply.status != 200:
        raise _Unanswered(f"status {reply.status}: {(await reply.text())[:200]}")
    return await reply.json(content_type=None)
