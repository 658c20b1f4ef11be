"""Every failure becomes ``{"error": {message, type, param, code}}`` with the right status."""

from __future__ import annotations

import logging
from typing import Any

import orjson
from pydantic import ValidationError
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import Response

from responsa.protocol import CreateResponseRequest, InvalidRequest, ResponsaError, union_tags

__all__ = ["EXCEPTION_HANDLERS", "error_response", "invalid_from_validation", "json_response"]

logger = logging.getLogger(__name__)

_TYPE_NAMES = frozenset({"str", "int", "float", "bool", "dict", "list", "function-after", "function-before"})
_TAGS = union_tags(CreateResponseRequest)
"""The tags pydantic adds to an error's location inside a tagged union (a request's items, parts,
tools, choices and formats are all in a create), taken from the protocol's unions."""
_UNION_FIELDS = frozenset({"tool_choice", "format"})


def json_response(body: Any, status_code: int = 200, headers: dict[str, str] | None = None) -> Response:
    """A JSON response encoded with orjson."""
    return Response(orjson.dumps(body), status_code=status_code, media_type="application/json", headers=headers)


def error_response(error: ResponsaError) -> Response:
    return json_response(error.to_body(), status_code=error.status_code, headers=error.headers)


def _param_from_loc(loc: tuple[int | str, ...]) -> str:
    kept: list[int | str] = []
    for part in loc:
        if isinstance(part, str) and ("[" in part or part in _TYPE_NAMES):
            continue
        if (
            isinstance(part, str)
            and part in _TAGS
            and kept
            and (isinstance(kept[-1], int) or kept[-1] in _UNION_FIELDS)
        ):
            continue
        kept.append(part)
    param = ""
    for part in kept:
        param += f"[{part}]" if isinstance(part, int) else (f".{part}" if param else part)
    return param


def invalid_from_validation(exc: ValidationError) -> InvalidRequest:
    """The most specific of pydantic's errors, phrased as the OpenAI API does."""
    errors = exc.errors(include_url=False)
    chosen = max(errors, key=lambda error: len(error["loc"]))
    param = _param_from_loc(tuple(chosen["loc"]))
    given = chosen.get("input")
    if chosen["type"] == "missing":
        if isinstance(given, dict) and isinstance(given.get("function"), dict):
            # A Chat Completions shape ({"type": "function", "function": {...}}) lacks it inside "function".
            param = f"{param.rpartition('.')[0]}.function.{param.rpartition('.')[2]}".lstrip(".")
        return InvalidRequest(f"Missing required parameter: '{param}'.", param=param, code="missing_required_parameter")
    message = str(chosen["msg"]).removeprefix("Value error, ")
    return InvalidRequest(f"Invalid '{param}': {message}.", param=param or None, code="invalid_value")


async def _responsa_error(_request: Request, exc: Exception) -> Response:
    assert isinstance(exc, ResponsaError)
    return error_response(exc)


async def _http_error(_request: Request, exc: Exception) -> Response:
    assert isinstance(exc, HTTPException)
    kind = {404: "not_found", 405: "method_not_allowed"}.get(exc.status_code)
    body = {"error": {"message": str(exc.detail), "type": "invalid_request_error", "param": None, "code": kind}}
    return json_response(body, status_code=exc.status_code, headers=dict(exc.headers or {}))  # a 405's Allow


async def _unexpected(_request: Request, exc: Exception) -> Response:
    logger.exception("unhandled error", exc_info=exc)
    return error_response(ResponsaError("The server had an error while processing your request."))


EXCEPTION_HANDLERS: dict[Any, Any] = {
    ResponsaError: _responsa_error,
    HTTPException: _http_error,
    Exception: _unexpected,
}
