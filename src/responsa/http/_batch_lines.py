"""How a batch's lines run, per endpoint: each line as the endpoint's handler would take it, through the
same engine, waiting apart for a slot below interactive traffic (``BATCH_RANK``)."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import anyio
from pydantic import ValidationError

from responsa.engine import BATCH_RANK, BatchLines, EmbeddingService, ResponseService, Run
from responsa.protocol import CreateEmbeddingRequest, CreateResponseRequest, InvalidRequest, RateLimited

from ._errors import invalid_from_validation
from ._limits import Limiter
from .chat import chat_request, completion

__all__ = ["batch_lines"]


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


async def _started(
    responses: ResponseService, limiter: Limiter, tenant: str, body: dict[str, Any], patience: float,
    endpoint: str, read: Callable[[dict[str, Any]], CreateResponseRequest],
) -> tuple[ResponseService, Run]:  # fmt: skip
    """A line's run, as its endpoint's handler starts one, waiting apart for its slot."""
    _checked(body, endpoint)
    try:
        request = read(body)
    except ValidationError as exc:
        raise invalid_from_validation(exc) from None
    await _admitted(limiter, tenant, patience)
    service = responses.for_tenant(tenant)
    return service, await service.start(request, apart=(BATCH_RANK, patience))


class ResponsesLines:
    """``/v1/responses`` lines: creates answered in JSON, stored where they ask to be."""

    def __init__(self, responses: ResponseService, limiter: Limiter) -> None:
        self._responses = responses
        self._limiter = limiter
        self.model = _model

    async def run(self, tenant: str, body: dict[str, Any], patience: float) -> dict[str, Any]:
        read = CreateResponseRequest.model_validate
        service, run = await _started(self._responses, self._limiter, tenant, body, patience, "/v1/responses", read)
        return await service.create_json(run)


class ChatLines:
    """``/v1/chat/completions`` lines, answered as chat completions."""

    def __init__(self, responses: ResponseService, limiter: Limiter) -> None:
        self._responses = responses
        self._limiter = limiter
        self.model = _model

    async def run(self, tenant: str, body: dict[str, Any], patience: float) -> dict[str, Any]:
        endpoint = "/v1/chat/completions"
        service, run = await _started(self._responses, self._limiter, tenant, body, patience, endpoint, chat_request)
        return completion(await service.create(run), bool(body.get("logprobs")))


class EmbeddingsLines:
    """``/v1/embeddings`` lines."""

    def __init__(self, embeddings: EmbeddingService, limiter: Limiter) -> None:
        self._embeddings = embeddings
        self._limiter = limiter
        self.model = _model

    async def run(self, tenant: str, body: dict[str, Any], patience: float) -> dict[str, Any]:
        try:
            request = CreateEmbeddingRequest.model_validate(body)
        except ValidationError as exc:
            raise invalid_from_validation(exc) from None
        await _admitted(self._limiter, tenant, patience)
        return await self._embeddings.create(request)


def batch_lines(responses: ResponseService, embeddings: EmbeddingService, limiter: Limiter) -> dict[str, BatchLines]:
    """The endpoints a batch may hold, each with how its lines run (within the tenant's rate limits)."""
    return {
        "/v1/responses": ResponsesLines(responses, limiter),
        "/v1/chat/completions": ChatLines(responses, limiter),
        "/v1/embeddings": EmbeddingsLines(embeddings, limiter),
    }
