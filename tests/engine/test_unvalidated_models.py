"""The models the engine builds on every request from values already validated (the response as it
starts, from the request's; its usage, from counts that are ints; the input message and the output
message it opens) are built unvalidated: each must be what validating the same values makes, field
for field and in the same order, and a default must never be shared between two models."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from pydantic import BaseModel, Field

from responsa.backends import TextDelta, TokenUsage
from responsa.engine import OutputBuilder
from responsa.engine.output._usage import usage_of
from responsa.engine.responses._context import normalize_input
from responsa.engine.responses.opening._new_response import new_response
from responsa.engine.tools import ToolRegistry, client_kinds
from responsa.protocol import CreateResponseRequest, InputText, Message, ResponseObject, Usage, unvalidated
from responsa.protocol._base import WireModel

REQUESTS: list[dict[str, Any]] = [
    {"model": "m", "input": "hi"},
    {"model": "m", "input": "hi", "background": True, "store": True, "metadata": {"k": "v"},
     "instructions": "be brief", "max_output_tokens": 9, "max_tool_calls": 2, "parallel_tool_calls": False,
     "temperature": 0.5, "top_p": 0.9, "top_logprobs": 3, "presence_penalty": 0.1, "frequency_penalty": -0.2,
     "truncation": "auto", "user": "u", "safety_identifier": "s", "prompt_cache_key": "p",
     "service_tier": "flex", "include": ["message.output_text.logprobs"], "previous_response_id": "resp_x",
     "reasoning": {"effort": "low", "generate_summary": "auto"},
     "text": {"format": {"type": "json_schema", "name": "n", "schema": {"type": "object"}}, "verbosity": "low"},
     "tool_choice": {"type": "function", "name": "f"},
     "tools": [{"type": "function", "name": "f", "parameters": {"type": "object"}},
               {"type": "mcp", "server_label": "s", "server_url": "http://127.0.0.1:1/mcp",
                "headers": {"Authorization": "Bearer secret"}, "require_approval": "never"}]},
    {"model": "m", "input": "hi", "conversation": "conv_1", "temperature": 0, "top_p": 1},
]  # fmt: skip


def _validated_twin(model: BaseModel) -> BaseModel:
    """The model validation makes from the values ``model`` was given."""
    return type(model)(**{name: getattr(model, name) for name in model.model_fields_set})


def _assert_as_validated(made: BaseModel, validated: BaseModel) -> None:
    """Field for field, in the same order, with the same fields set and the same JSON."""
    assert made.__dict__ == validated.__dict__ and list(made.__dict__) == list(validated.__dict__)
    assert made.model_fields_set == validated.model_fields_set
    assert made.model_dump_json() == validated.model_dump_json()


@pytest.mark.parametrize("body", REQUESTS)
def test_a_new_response_is_the_validated_one(body: dict[str, Any]) -> None:
    request = CreateResponseRequest.model_validate(body)
    fast = new_response(request, stored=True)
    validated = _validated_twin(fast)
    assert isinstance(validated, ResponseObject)
    _assert_as_validated(fast, validated)
    assert fast.__pydantic_extra__ == validated.__pydantic_extra__ == {}


def test_a_new_response_holds_none_of_the_requests_mutable_values() -> None:
    request = CreateResponseRequest.model_validate(REQUESTS[1])
    response = new_response(request, stored=True)
    assert response.metadata == request.metadata and response.metadata is not request.metadata
    assert response.tools is not request.tools and response.output == []
    assert response.tools[1].headers is None and request.tools[1].headers  # type: ignore[union-attr]
    response.metadata["added"] = "x"
    response.vendor_notes = []  # type: ignore[attr-defined]  # a field nobody declared, kept as extra
    assert "added" not in (request.metadata or {}) and response.__pydantic_extra__ == {"vendor_notes": []}
    assert new_response(request, stored=True).output is not response.output


def test_usage_is_the_validated_usage() -> None:
    usage = usage_of(TokenUsage(input_tokens=12, output_tokens=7, cached_tokens=3, reasoning_tokens=2))
    _assert_as_validated(usage, Usage.model_validate(usage.model_dump()))  # its details validated afresh too
    assert usage.total_tokens == 19 and usage.input_tokens_details.cached_tokens == 3
    assert usage.output_tokens_details.reasoning_tokens == 2


def test_the_input_message_and_the_opened_message_are_the_validated_ones() -> None:
    request = CreateResponseRequest.model_validate({"model": "m", "input": "hello"})
    (message,) = asyncio.run(normalize_input(None, request, ToolRegistry(client_kinds())))  # type: ignore[arg-type]  # a string reads no store
    builder = OutputBuilder(new_response(request, stored=True))
    builder.start()
    builder.feed(TextDelta("Hi"))
    (opened,) = builder.response.output
    for made in (message, message.content[0], opened):
        _assert_as_validated(made, _validated_twin(made))
    assert (
        isinstance(message, Message) and message.content == [InputText(text="hello")] and opened.status == "in_progress"
    )


def test_a_model_missing_a_required_field_is_refused() -> None:
    with pytest.raises(TypeError, match="content"):
        unvalidated(Message, {"role": "user"})


class _Defaults(WireModel):
    listed: list[int] = []  # noqa: RUF012  # a mutable default, as a model may declare one
    made: dict[str, int] = Field(default_factory=dict)
    count: int = 0


def test_defaults_are_filled_in_and_never_shared() -> None:
    first, second = unvalidated(_Defaults, {"count": 1}), unvalidated(_Defaults, {})
    first.listed.append(1)
    first.made["k"] = 1
    assert second.listed == [] and second.made == {} and _Defaults().listed == []
    assert first.__dict__ == {"listed": [1], "made": {"k": 1}, "count": 1} and first.model_fields_set == {"count"}
    assert unvalidated(_Defaults, {"count": 2}).__dict__ == _Defaults(count=2).__dict__
