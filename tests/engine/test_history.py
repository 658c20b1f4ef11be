"""Multi-turn by previous_response_id: the chain's inputs and outputs are the context."""

from __future__ import annotations

import json

import httpx
import openai
import pytest

from tests.http.test_streaming import WEATHER_TOOL


def test_tool_call_two_turns_back_is_still_in_context(client: openai.OpenAI) -> None:
    first = client.responses.create(model="sim", input="What's the weather in Quito?", tools=[WEATHER_TOOL])
    [call] = [item for item in first.output if item.type == "function_call"]
    second = client.responses.create(model="sim", previous_response_id=first.id, input="Reply with: one moment")
    third = client.responses.create(
        model="sim",
        previous_response_id=second.id,
        input=[{"type": "function_call_output", "call_id": call.call_id, "output": "Quito is 14C"}],
    )
    assert "Quito is 14C" in third.output_text
    assert json.loads(call.arguments)["location"] in third.output_text
    assert third.previous_response_id == second.id


def test_context_grows_along_the_chain(client: openai.OpenAI) -> None:
    previous = None
    last_total = 0
    for turn in range(4):
        reply = client.responses.create(model="sim", input=f"Reply with: turn {turn}", previous_response_id=previous)
        assert reply.usage is not None
        assert reply.usage.input_tokens > last_total
        last_total = reply.usage.input_tokens + reply.usage.output_tokens
        previous = reply.id


def test_instructions_are_not_inherited(client: openai.OpenAI) -> None:
    def second_turn_input_tokens(instructions: str | None) -> int:
        first = client.responses.create(model="sim", input="Reply with: same", instructions=instructions)
        second = client.responses.create(model="sim", input="Reply with: again", previous_response_id=first.id)
        assert second.instructions is None
        assert second.usage is not None
        return second.usage.input_tokens

    assert second_turn_input_tokens("A very long set of instructions " * 20) == second_turn_input_tokens(None)


def test_output_items_passed_back_as_input_are_accepted(client: openai.OpenAI) -> None:
    first = client.responses.create(model="sim", input="What's the weather in Oslo?", tools=[WEATHER_TOOL])
    [call] = first.output
    manual = client.responses.create(
        model="sim",
        input=[
            {"role": "user", "content": "What's the weather in Oslo?"},
            call.model_dump(exclude_none=True),
            {"type": "function_call_output", "call_id": call.call_id, "output": "Oslo: 3C, snow"},
        ],
        tools=[WEATHER_TOOL],
    )
    assert "Oslo: 3C, snow" in manual.output_text


def test_item_reference_resolves_a_stored_item(client: openai.OpenAI) -> None:
    first = client.responses.create(model="sim", input="Reply with: referenced")
    message_id = first.output[0].id
    reply = client.responses.create(
        model="sim", input=[{"type": "item_reference", "id": message_id}, {"role": "user", "content": "Reply with: ok"}]
    )
    listed = client.responses.input_items.list(reply.id, order="asc").data
    assert listed[0].id == message_id and listed[0].content[0].text == "referenced"


def test_store_false_is_neither_retrievable_nor_chainable(client: openai.OpenAI, http: httpx.Client) -> None:
    body = http.post("/v1/responses", json={"model": "sim", "input": "Reply with: secret", "store": False}).json()
    assert body["store"] is False and body["output_text"] == "secret"
    reply = client.responses.create(model="sim", input="Reply with: secret", store=False)
    with pytest.raises(openai.NotFoundError):
        client.responses.retrieve(reply.id)
    with pytest.raises(openai.NotFoundError) as raised:
        client.responses.create(model="sim", input="more", previous_response_id=reply.id)
    assert raised.value.body["param"] == "previous_response_id"  # type: ignore[index]
    assert http.get(f"/v1/responses/{reply.id}/input_items").status_code == 404
    assert (
        http.post(
            "/v1/responses", json={"model": "sim", "input": [{"type": "item_reference", "id": reply.output[0].id}]}
        ).status_code
        == 404
    )


def test_store_false_streaming_leaves_nothing_behind(client: openai.OpenAI) -> None:
    with client.responses.stream(model="sim", input="Reply with: gone", store=False) as stream:
        final = stream.get_final_response()
    assert final.output_text == "gone"
    with pytest.raises(openai.NotFoundError):
        client.responses.retrieve(final.id)
