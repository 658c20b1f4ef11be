"""How a batch's lines run, per endpoint: each line as the endpoint's handler would take it, through the
same engine, waiting apart for a slot below interactive traffic (``BATCH_RANK``)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

import orjson
from pydantic import ValidationError

from responsa.engine import BATCH_RANK, Apart, BatchLines, EmbeddingService, ResponseService, Run, Started
from responsa.engine.usage import Used
from responsa.protocol import (
    CreateEmbeddingRequest,
    CreateResponseRequest,
    InvalidRequest,
    NotFound,
    PayloadTooLarge,
    ResponseObject,
    dump_dict,
)

from ._errors import invalid_from_validation
from ._limits import Limiter, Permits, admitted
from .chat import chat_request, completion

__all__ = ["batch_lines"]

Request = TypeVar("Request")


Count = Callable[[str, Used], None]
"""Counts what a line that is not a response used in the usage ledger, for its tenant."""


def _within(body: dict[str, Any], limit: int) -> None:
    """A line's body is a request like any other: one larger than ``--max-body-bytes`` is its 413."""
    if len(orjson.dumps(body)) > limit:
        raise PayloadTooLarge(f"The request body is larger than {limit} bytes.")


def _checked(body: dict[str, Any], endpoint: str) -> None:
    for name in ("stream", "background"):
        if body.get(name):
            raise InvalidRequest(
                f"'{name}' is not supported for requests in a batch ({endpoint}).",
                param=name,
                code="unsupported_parameter",
            )


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
Reply = Callable[[ResponseObject, dict[str, Any]], dict[str, Any]]
"""An endpoint's reply to a line, from the response an earlier run of it stored."""

_REUSED = ("completed", "incomplete")
"""The stored states an earlier run's reply is rebuilt from (a failed run's HTTP error is not stored)."""


class CreateLines:
    """Lines whose requests are creates (``/v1/responses``, ``/v1/chat/completions``): ``read`` makes
    the create of a body as the endpoint's handler does, ``answer`` the endpoint's reply; each run
    waits apart for its slot, and gives it back (stopped, storing nothing) when a request needs it."""

    def __init__(
        self, responses: ResponseService, limiter: Limiter, max_body_bytes: int, endpoint: str,
        read: Callable[[dict[str, Any]], CreateResponseRequest], answer: Answer, reply: Reply,
    ) -> None:  # fmt: skip
        self._responses = responses
        self._limiter = limiter
        self._max_body_bytes = max_body_bytes
        self._endpoint = endpoint
        self._read = read
        self._answer = answer
        self._reply = reply
        self.model = _model

    async def run(
        self, tenant: str, body: dict[str, Any], patience: float, preempt: Callable[[], None], started: Started
    ) -> dict[str, Any]:
        _within(body, self._max_body_bytes)
        _checked(body, self._endpoint)
        request = _validated(self._read, body)
        await admitted(self._limiter, tenant, patience)
        service = self._responses.for_tenant(tenant)
        run = await service.start(request, apart=Apart(BATCH_RANK, patience, preempt))
        await started(run.response.id)  # before the run is driven: it cannot have stored anything yet
        return await self._answer(service, run, body)

    async def stored(self, tenant: str, response_id: str, body: dict[str, Any]) -> dict[str, Any] | None:
        try:
            response = await self._responses.for_tenant(tenant).get(response_id)
        except NotFound:
            return None
        return self._reply(response, body) if response.status in _REUSED else None


async def _response(service: ResponseService, run: Run, _body: dict[str, Any]) -> dict[str, Any]:
    return await service.create_json(run)


def _stored_response(response: ResponseObject, _body: dict[str, Any]) -> dict[str, Any]:
    return dump_dict(response)


async def _completion(service: ResponseService, run: Run, body: dict[str, Any]) -> dict[str, Any]:
    return _stored_completion(await service.create(run), body)


def _stored_completion(response: ResponseObject, body: dict[str, Any]) -> dict[str, Any]:
    return completion(response, bool(body.get("logprobs")))


class EmbeddingsLines:
    """``/v1/embeddings`` lines (embeddings take no generation slot: never pre-empted)."""

    def __init__(
        self, embeddings: EmbeddingService, limiter: Limiter, max_body_bytes: int, permits: Permits, count: Count
    ) -> None:
        self._embeddings = embeddings
        self._permits = permits
        self._count = count
        self._limiter = limiter
        self._max_body_bytes = max_body_bytes
        self.model = _model

    async def run(
        self, tenant: str, body: dict[str, Any], patience: float, preempt: Callable[[], None], started: Started
    ) -> dict[str, Any]:
        _within(body, self._max_body_bytes)
        request = _validated(CreateEmbeddingRequest.model_validate, body)
        await admitted(self._limiter, tenant, patience)
        await self._permits(tenant, request.model, (), patience)
        reply = await self._embeddings.create(request)
        self._count(tenant, Used("embeddings", request.model, input_tokens=reply["usage"]["prompt_tokens"]))
        return reply

    async def stored(self, tenant: str, response_id: str, body: dict[str, Any]) -> dict[str, Any] | None:
        return None  # an embedding stores nothing: it is made again


def batch_lines(
    responses: ResponseService,
    embeddings: EmbeddingService,
    limiter: Limiter,
    max_body_bytes: int,
    permits: Permits,
    count: Count,
) -> dict[str, BatchLines]:
    """The endpoints a batch may hold, each with how its lines run (within the tenant's rate limits,
    its project's model permissions (``permits``; the responses' opener checks its own) and the body
    limit, as the endpoint's own requests)."""
    return {
        "/v1/responses": CreateLines(
            responses,
            limiter,
            max_body_bytes,
            "/v1/responses",
            CreateResponseRequest.model_validate,
            _response,
            _stored_response,
        ),
        "/v1/chat/completions": CreateLines(
            responses, limiter, max_body_bytes, "/v1/chat/completions", chat_request, _completion, _stored_completion
        ),
        "/v1/embeddings": EmbeddingsLines(embeddings, limiter, max_body_bytes, permits, count),
    }
