"""A batch's input file read and checked, and its output file's lines (OpenAI's shapes)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Collection
from dataclasses import dataclass, field
from typing import Any, Protocol

import orjson

from responsa.protocol import BatchLineError, new_id
from responsa.store import InputLine

__all__ = [
    "BATCH_RANK",
    "MAX_LINES",
    "BatchLines",
    "CheckedFile",
    "Started",
    "check_file",
    "line_error",
    "line_result",
    "usage_of",
]

MAX_LINES = 50_000
"""OpenAI's limit on the requests of one batch."""

BATCH_RANK = 6
"""A batch line's rank among work waiting apart for a slot: behind background runs of every completion
window (``2h`` ranks 2, ``8h`` 4; see ``responses/opening/_opening.py``)."""

MAX_REPORTED = 100
"""Validation stops reporting after this many errors (the batch fails either way)."""


Started = Callable[[str], Awaitable[None]]
"""Told the id of the response a line's run makes, before the run can store it (see ``BatchLines.run``)."""


class BatchLines(Protocol):
    """How the lines of one endpoint run (the HTTP layer has one for each endpoint it batches)."""

    def model(self, body: dict[str, Any]) -> str | None:
        """The model a line's body names (None if it names none: its run answers the 400)."""

    async def run(
        self, tenant: str, body: dict[str, Any], patience: float, preempt: Callable[[], None], started: Started
    ) -> dict[str, Any]:
        """The endpoint's reply to ``body``, waiting at most ``patience`` seconds for a slot below
        interactive traffic; a :class:`ResponsaError` is the line's error reply. A request that needs
        the slot the line holds calls ``preempt`` (which stops this call) and the line runs again later;
        lines that hold no slot never do. A run that stores a response awaits ``started`` with its id
        before it can store it (lines that store none never call it)."""

    async def stored(self, tenant: str, response_id: str, body: dict[str, Any]) -> dict[str, Any] | None:
        """The endpoint's reply to ``body`` from the response ``response_id`` an earlier run of the line
        stored before its process died, or None if it stored none (the line runs again)."""


@dataclass
class CheckedFile:
    lines: list[InputLine] = field(default_factory=list)
    errors: list[BatchLineError] = field(default_factory=list)
    model: str | None = None

    def fail(self, code: str, message: str, line: int | None = None, param: str | None = None) -> None:
        if len(self.errors) < MAX_REPORTED:
            self.errors.append(BatchLineError(code=code, line=line, message=message, param=param))


def check_file(data: bytes, endpoint: str, lines: BatchLines, models: Collection[str]) -> CheckedFile:
    """Every line of the input file checked as OpenAI does before a batch starts: JSON, ``custom_id``
    (present, unique), ``method`` POST, ``url`` the batch's endpoint, one model that this server serves."""
    checked = CheckedFile()
    seen: set[str] = set()
    for number, raw in enumerate(data.splitlines(), start=1):
        if not raw.strip():
            continue
        try:
            entry = orjson.loads(raw)
        except orjson.JSONDecodeError:
            entry = None
        if not isinstance(entry, dict):
            checked.fail("invalid_json_line", "This line is not parseable as valid JSON.", number)
            continue
        custom_id, body = entry.get("custom_id"), entry.get("body")
        if not isinstance(custom_id, str) or not custom_id:
            checked.fail("missing_required_parameter", "Each line needs a 'custom_id' string.", number, "custom_id")
        elif custom_id in seen:
            checked.fail(
                "duplicate_custom_id", f"The custom_id {custom_id!r} is used more than once.", number, "custom_id"
            )
        if entry.get("method") != "POST":
            checked.fail("invalid_method", "Each line's 'method' must be 'POST'.", number, "method")
        if entry.get("url") != endpoint:
            checked.fail(
                "url_mismatch",
                f"The line's url {entry.get('url')!r} is not the batch's endpoint {endpoint!r}.",
                number,
                "url",
            )
        if not isinstance(body, dict):
            checked.fail("invalid_request", "Each line needs a 'body' object.", number, "body")
            continue
        model = lines.model(body)
        if model is not None and model not in models:
            checked.fail("model_not_found", f"The model {model!r} is not served here.", number, "body.model")
        elif model is not None and checked.model is not None and model != checked.model:
            checked.fail(
                "model_mismatch",
                f"The model {model!r} differs from the batch's {checked.model!r}: a batch runs one model.",
                number,
                "body.model",
            )
        checked.model = checked.model or model
        if isinstance(custom_id, str) and custom_id:
            seen.add(custom_id)
            checked.lines.append(InputLine(number, custom_id, orjson.dumps(body).decode()))
    if not checked.lines and not checked.errors:
        checked.fail("empty_file", "The input file has no requests.")
    if len(checked.lines) > MAX_LINES:
        checked.fail(
            "too_many_tasks", f"A batch may hold at most {MAX_LINES} requests; this file has {len(checked.lines)}."
        )
    return checked


def _line(custom_id: str, response: dict[str, Any] | None, error: dict[str, str] | None) -> str:
    """An output or error file's line: ``{id, custom_id, response, error}``."""
    return orjson.dumps({"id": new_id("batch_req"), "custom_id": custom_id, "response": response,
                         "error": error}).decode()  # fmt: skip


def line_result(custom_id: str, status_code: int, body: dict[str, Any]) -> str:
    """The line of a request that ran, with the endpoint's status and reply."""
    return _line(custom_id, {"status_code": status_code, "request_id": new_id("req"), "body": body}, None)


def line_error(custom_id: str, code: str, message: str) -> str:
    """The line of a request that never ran (the batch expired or was cancelled first)."""
    return _line(custom_id, None, {"code": code, "message": message})


def usage_of(results: list[str]) -> dict[str, Any]:
    """The batch's ``usage``: the sum over its successful lines, whichever endpoint's names they use
    (a response's ``input_tokens``, a completion's or an embedding's ``prompt_tokens``)."""
    total = {"input": 0, "cached": 0, "output": 0, "reasoning": 0}
    for result in results:
        usage = orjson.loads(result)["response"]["body"].get("usage") or {}
        total["input"] += usage.get("input_tokens", usage.get("prompt_tokens", 0))
        total["output"] += usage.get("output_tokens", usage.get("completion_tokens", 0))
        inputs = usage.get("input_tokens_details") or usage.get("prompt_tokens_details") or {}
        outputs = usage.get("output_tokens_details") or usage.get("completion_tokens_details") or {}
        total["cached"] += inputs.get("cached_tokens") or 0
        total["reasoning"] += outputs.get("reasoning_tokens") or 0
    return {
        "input_tokens": total["input"],
        "input_tokens_details": {"cached_tokens": total["cached"]},
        "output_tokens": total["output"],
        "output_tokens_details": {"reasoning_tokens": total["reasoning"]},
        "total_tokens": total["input"] + total["output"],
    }
