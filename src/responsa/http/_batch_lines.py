"""How a batch's lines run, per endpoint: each line as the endpoint's handler would take it, through the
same engine, waiting apart for a slot below interactive traffic (``BATCH_RANK``)."""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

import anyio
from pydantic import ValidationError

from responsa.engine import BATCH_RANK, Apart, BatchLines, EmbeddingService, ResponseService, Run
from responsa.protocol import CreateEmbeddingRequest, CreateResponseRequest, InvalidRequest, RateLimited

from ._errors import invalid_from_validation
from ._limits import Limiter
from .chat import chat_request, completion

__all__ = ["batch_lines"]

Request = TypeVar("Request")


def _checked(body: dict[str, Any], endpoint: str) -> None:
    for name in ("stream", "background"):
        if body.get(name):
            raise InvalidRequest(
                f"'{name}' is not supported for requests in a batch ({endpoint}).",
                param=name,
                code="unsupported_parameter",
            )


async def _admitted(limiter: Limiter, tenant: str, patience: float) -> None:
    """Wait until the tenant's rate limits let one more request through (as the HTTP gate would),
    for ``patience`` seconds at most: a batch line waits its turn instead of failing."""
    deadline = time.monotonic() + patience
    while True:
        try:
            await limiter.admit(tenant)
            return
        except RateLimited as refused:
            pause = float(refused.headers.get("retry-after", "1"))
            if time.monotonic() + pause > deadline:
                raise
            await anyio.sleep(pause)


def _model(body: dict[str, Any]) -> str | None:
    model = body.get("model")
    return model if isinstance(model, str) else None


def _validated(read: Callable[[dict[str, Any]], Request], body: dict[str, Any]) -> Request:
    """The body as its endpoint reads it; invalid fields are the line's 400 naming them."""
    try:
        return read(body)
    except ValidationError as exc:
        raise invalid_from_validation(exc) from None


Answer = Callable[[ResponseService, Run, dict[str, Any]], Awaitable[dict[str, Any]]]
"""An endpoint's reply to a line, from its run."""


class CreateLines:
    """Lines whose requests are creates (``/v1/responses``, ``/v1/chat/completions``): ``read`` makes
    the create of a body as the endpoint's handler does, ``answer`` the endpoint's reply; each run
    waits apart for its slot, and gives it back (stopped, storing nothing) when a request needs it."""

    def __init__(
        self, responses: ResponseService, limiter: Limiter, endpoint: str,
        read: Callable[[dict[str, Any]], CreateResponseRequest], answer: Answer,
    ) -> None:  # fmt: skip
        self._responses = responses
        self._limiter = limiter
        self._endpoint = endpoint
        self._read = read
        self._answer = answer
        self.model = _model

    async def run(
        self, tenant: str, body: dict[str, Any], patience: float, preempt: Callable[[], None]
    ) -> dict[str, Any]:
        _checked(body, self._endpoint)
        request = _validated(self._read, body)
        await _admitted(self._limiter, tenant, patience)
        service = self._responses.for_tenant(tenant)
        run = await service.start(request, apart=Apart(BATCH_RANK, patience, preempt))
        return await self._answer(service, run, body)


async def _response(service: ResponseService, run: Run, _body: dict[str, Any]) -> dict[str, Any]:
    return await service.create_json(run)


async def _completion(service: ResponseService, run: Run, body: dict[str, Any]) -> dict[str, Any]:
    return completion(await service.create(run), bool(body.get("logprobs")))


class EmbeddingsLines:
    """``/v1/embeddings`` lines (embeddings take no generation slot: never pre-empted)."""

    def __init__(self, embeddings: EmbeddingService, limiter: Limiter) -> None:
        self._embeddings = embeddings
        self._limiter = limiter
        self.model = _model

    async def run(
        self, tenant: str, body: dict[str, Any], patience: float, preempt: Callable[[], None]
    ) -> dict[str, Any]:
        request = _validated(CreateEmbeddingRequest.model_validate, body)
        await _admitted(self._limiter, tenant, patience)
        return await self._embeddings.create(request)


def batch_lines(responses: ResponseService, embeddings: EmbeddingService, limiter: Limiter) -> dict[str, BatchLines]:
    """The endpoints a batch may hold, each with how its lines run (within the tenant's rate limits)."""
    return {
        "/v1/responses": CreateLines(
            responses, limiter, "/v1/responses", CreateResponseRequest.model_validate, _response
        ),
        "/v1/chat/completions": CreateLines(responses, limiter, "/v1/chat/completions", chat_request, _completion),
        "/v1/embeddings": EmbeddingsLines(embeddings, limiter),
    }
