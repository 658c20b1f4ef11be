"""How a batch's lines run, per endpoint: each line as the endpoint's handler would take it, through the
same engine, waiting apart for a slot below interactive traffic (``BATCH_RANK``)."""

from __future__ import annotations

from typing import Any

from pydantic import ValidationError

from responsa.engine import BATCH_RANK, BatchLines, ResponseService
from responsa.protocol import CreateResponseRequest, InvalidRequest

from ._errors import invalid_from_validation
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


def _model(body: dict[str, Any]) -> str | None:
    model = body.get("model")
    return model if isinstance(model, str) else None


class ResponsesLines:
    """``/v1/responses`` lines: creates answered in JSON, stored where they ask to be."""

    def __init__(self, responses: ResponseService) -> None:
        self._responses = responses
        self.model = _model

    async def run(self, tenant: str, body: dict[str, Any], patience: float) -> dict[str, Any]:
        _checked(body, "/v1/responses")
        try:
            request = CreateResponseRequest.model_validate(body)
        except ValidationError as exc:
            raise invalid_from_validation(exc) from None
        service = self._responses.for_tenant(tenant)
        run = await service.start(request, apart=(BATCH_RANK, patience))
        return await service.create_json(run)


class ChatLines:
    """``/v1/chat/completions`` lines, answered as chat completions."""

    def __init__(self, responses: ResponseService) -> None:
        self._responses = responses
        self.model = _model

    async def run(self, tenant: str, body: dict[str, Any], patience: float) -> dict[str, Any]:
        _checked(body, "/v1/chat/completions")
        try:
            request = chat_request(body)
        except ValidationError as exc:
            raise invalid_from_validation(exc) from None
        service = self._responses.for_tenant(tenant)
        run = await service.start(request, apart=(BATCH_RANK, patience))
        return completion(await service.create(run), bool(body.get("logprobs")))


def batch_lines(responses: ResponseService) -> dict[str, BatchLines]:
    """The endpoints a batch may hold, each with how its lines run."""
    return {"/v1/responses": ResponsesLines(responses), "/v1/chat/completions": ChatLines(responses)}
