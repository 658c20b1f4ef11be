"""The create parameters of openai 3.57, walked field by field through the SDK: each is honoured
(and echoed where OpenAI echoes it) or a 400 naming it, never accepted without effect; and the
``configuration_update`` item, which changes later turns' settings."""

from __future__ import annotations

import typing
from typing import Any

import openai
import pytest
from openai.types.beta import response_create_params as beta_create_params
from openai.types.responses import response_create_params

SAMPLES: dict[str, Any] = {
    "access_programs": {"cyber": "standard"},
    "background": False,
    "background_options": {"completion_window": "soonest"},
    "context_management": [{"type": "compaction", "compact_threshold": 100_000}],
    "conversation": None,
    "image": {"context_compression": "auto"},
    "include": ["message.output_text.logprobs"],
    "input": "Hello",
    "instructions": "Be brief.",
    "max_output_tokens": 32,
    "max_tool_calls": 2,
    "metadata": {"k": "v"},
    "model": "sim",
    "moderation": {"model": "sim-moderation", "policy": {"input": {"mode": "score"}}},
    "parallel_tool_calls": False,
    "previous_response_id": None,
    "prompt": {"id": "pmpt_123", "variables": {"city": "Paris"}},
    "prompt_cache_key": "thread-1",
    "prompt_cache_options": {"mode": "implicit", "ttl": "30m"},
    "prompt_cache_retention": "24h",
    "reasoning": {"effort": "low", "summary": "auto"},
    "safety_identifier": "u" * 128,
    "service_tier": "fast",
    "store": False,
    "stream_options": None,
    "temperature": 0.5,
    "text": {"verbosity": "low"},
    "tool_choice": "auto",
    "tools": [],
    "top_logprobs": 2,
    "top_p": 0.9,
    "truncation": "auto",
    "user": "someone",
}
NOT_SERVED = {"prompt"}
"""Fields responsa answers with a 400 naming them here: no reusable prompt ``pmpt_123`` is installed."""


def create_fields() -> list[str]:
    return sorted(typing.get_type_hints(response_create_params.ResponseCreateParamsBase))


BETA_ONLY = {"multi_agent": {"enabled": True, "max_concurrent_subagents": 2}, "betas": None}
"""The fields of the beta ``responses.create`` (``client.beta.responses``) that the stable one has not:
``multi_agent`` runs subagents (``tests/http/test_multi_agent.py``); ``betas`` is the header
``openai-beta``, not a body field."""


def test_every_field_of_the_sdk_has_a_sample() -> None:
    assert set(create_fields()) == set(SAMPLES)
    beta = set(typing.get_type_hints(beta_create_params.ResponseCreateParamsBase))
    assert beta - set(SAMPLES) == set(BETA_ONLY)  # a new beta field fails here until it has an answer


def test_the_beta_multi_agent_field_runs_subagents_or_is_a_400_naming_what_is_wrong(app_client: openai.OpenAI) -> None:
    delegated = app_client.beta.responses.create(
        model="sim", input="Delegate to helpers: Reply with: one", multi_agent=BETA_ONLY["multi_agent"]
    )  # type: ignore[arg-type]
    assert delegated.output[-1].type == "message" and "task_1: one" in delegated.output_text
    with pytest.raises(openai.BadRequestError) as caught:  # an earlier beta's shape
        app_client.responses.create(model="sim", input="Hello", extra_body={"multi_agent": {"agents": []}})
    assert caught.value.param == "multi_agent.enabled"
    off = app_client.responses.create(
        model="sim", input="Delegate to helpers: Reply with: one", extra_body={"multi_agent": {"enabled": False}}
    )
    assert all(item.type == "message" for item in off.output)  # no subagents asked for: none offered


@pytest.mark.parametrize("field", create_fields())
def test_each_create_field_is_honoured_or_a_400_naming_it(app_client: openai.OpenAI, field: str) -> None:
    model = "gpt-5-mini" if field == "reasoning" else "sim"
    body = {"model": model, "input": "Hello", field: SAMPLES[field]}
    if body[field] is None:
        body.pop(field)
    if field in NOT_SERVED:
        with pytest.raises(openai.BadRequestError) as caught:
            app_client.responses.create(**body)
        assert caught.value.param == field and caught.value.code == "unsupported_parameter"
        return
    response = app_client.responses.create(**body)
    assert response.status in ("completed", "incomplete")
    echoed = response.to_dict(warnings=False)
    if field in ("service_tier", "safety_identifier", "metadata", "prompt_cache_key", "user", "instructions"):
        assert echoed[field] == SAMPLES[field]
    if field == "image":
        assert echoed["image"] == {"context_compression": "disabled"}  # never compressed here
    if field == "access_programs":
        assert echoed["access_programs"] == {"cyber": "standard"}
    if field == "prompt_cache_options":
        assert echoed["prompt_cache_options"] == {"mode": "implicit", "ttl": "30m", "comparison_response_id": None}
    if field == "moderation":
        assert echoed["moderation"]["input"]["type"] == echoed["moderation"]["output"]["type"] == "moderation_result"


@pytest.mark.parametrize(
    ("extra", "param"),
    [
        ({"reasoning": {"effort": "low", "mode": "pro"}}, "reasoning.mode"),
        ({"image": {"context_compression": "enabled"}}, "image.context_compression"),
        ({"background_options": {"completion_window": "2h"}}, "background_options.completion_window"),
        ({"background": True, "stream": True, "background_options": {"completion_window": "8h"}}, "stream"),
        ({"safety_identifier": "u" * 129}, "safety_identifier"),
    ],
)
def test_values_that_cannot_be_honoured_are_a_400_naming_them(
    app_client: openai.OpenAI, extra: dict[str, Any], param: str
) -> None:
    with pytest.raises(openai.BadRequestError) as caught:
        app_client.responses.create(model="gpt-5-mini", input="Hello", **extra)
    assert caught.value.param == param


def test_a_background_response_with_a_later_window_runs_and_completes(app_client: openai.OpenAI) -> None:
    queued = app_client.responses.create(model="sim", input="Hello", background=True,
                                     background_options={"completion_window": "8h"})  # fmt: skip
    with app_client.responses.retrieve(queued.id, stream=True) as events:
        kinds = [event.type for event in events]
    assert kinds[-1] == "response.completed"  # started at once: well inside its window


def test_a_configuration_update_changes_this_and_later_turns(app_client: openai.OpenAI) -> None:
    update = {"type": "configuration_update", "reasoning": {"effort": "high"}}
    first = app_client.responses.create(model="gpt-5-mini", reasoning={"effort": "low"},
                                    input=[{"role": "user", "content": "Plan it."}, update])  # type: ignore[list-item]  # fmt: skip
    assert first.reasoning is not None and first.reasoning.effort == "high"
    later = app_client.responses.create(model="gpt-5-mini", reasoning={"effort": "low"},
                                    previous_response_id=first.id, input="And then?")  # fmt: skip
    assert later.reasoning is not None and later.reasoning.effort == "high"  # still in effect
    assert later.usage is not None and first.usage is not None
    assert later.usage.output_tokens_details.reasoning_tokens > 0
    plain = app_client.responses.create(model="gpt-5-mini", reasoning={"effort": "low"}, input="Plan it.")
    assert plain.usage is not None
    assert later.usage.output_tokens_details.reasoning_tokens > plain.usage.output_tokens_details.reasoning_tokens


def test_a_configuration_update_can_ask_for_json(app_client: openai.OpenAI) -> None:
    schema = {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"],
              "additionalProperties": False}  # fmt: skip
    update = {"type": "configuration_update",
              "text": {"format": {"type": "json_schema", "name": "place", "schema": schema, "strict": True}}}  # fmt: skip
    response = app_client.responses.create(model="sim", input=[{"role": "user", "content": "Where?"}, update])  # type: ignore[list-item]
    assert response.text is not None and response.text.format.type == "json_schema"
    assert response.output_text.startswith("{") and '"city"' in response.output_text


@pytest.mark.parametrize(
    ("tools", "param"),
    [
        ([{"type": "function", "name": "f", "allowed_callers": ["programmatic"]}], "tools[0].allowed_callers"),
        ([{"type": "custom", "name": "c", "allowed_callers": ["direct", "programmatic"]}], "tools[0].allowed_callers"),
        ([{"type": "namespace", "name": "ns", "tools": [{"type": "function", "name": "g",
                                                         "allowed_callers": ["programmatic"]}]}],
         "tools[0].tools[0].allowed_callers"),
    ],
)  # fmt: skip
def test_a_tool_only_programs_may_call_is_a_400(app_client: openai.OpenAI, tools: list[Any], param: str) -> None:
    with pytest.raises(openai.BadRequestError) as caught:
        app_client.responses.create(model="sim", input="Hello", tools=tools)
    assert caught.value.param == param


def test_direct_callers_are_served(app_client: openai.OpenAI) -> None:
    tool = {"type": "function", "name": "get_weather", "allowed_callers": ["direct"],
            "parameters": {"type": "object", "properties": {"city": {"type": "string"}}}}  # fmt: skip
    response = app_client.responses.create(model="sim", input="Weather in Paris?", tools=[tool])  # type: ignore[list-item]
    assert response.output[0].type == "function_call"


FEATURE_FIELDS = ("access_programs", "image", "ignored_tools", "input_transformations", "moderation", "prompt",
                  "prompt_cache_diagnostics", "prompt_cache_options")  # fmt: skip
"""The response fields request features fill, declared on the response object."""


def test_a_create_that_names_no_feature_shows_none_of_their_fields(app_client: openai.OpenAI) -> None:
    plain = app_client.responses.create(model="sim", input="Hello")
    assert plain.status == "completed"
    stored = app_client.responses.retrieve(plain.id).model_dump(exclude_unset=True)
    assert not [name for name in FEATURE_FIELDS if name in stored or name in plain.model_dump(exclude_unset=True)]
    asked = app_client.responses.create(model="sim", input="Hello", moderation=SAMPLES["moderation"],
                                        image=SAMPLES["image"])  # fmt: skip
    again = app_client.responses.retrieve(asked.id)
    assert asked.moderation is not None and again.moderation == asked.moderation
    assert asked.image is not None and again.image == asked.image
