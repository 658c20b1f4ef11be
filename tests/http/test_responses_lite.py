"""Codex's Responses Lite through the API: tools given in ``additional_tools`` input items (in a
``namespace``), ``reasoning.context`` honoured, and an input item of a type nothing here reads a 400
naming it, as OpenAI answers (never kept and ignored)."""

from __future__ import annotations

from typing import Any

import httpx
import openai
import pytest

WEATHER = {"type": "function", "name": "get_weather", "description": "Get the current weather for a city.",
           "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}}  # fmt: skip
LITE_TOOLS = {"type": "additional_tools", "role": "developer",
              "tools": [{"type": "namespace", "name": "functions", "description": "Tools", "tools": [WEATHER]}]}  # fmt: skip
ASK = {"role": "user", "content": "What is the weather in Paris?"}


def _error(response: httpx.Response) -> dict[str, Any]:
    assert response.status_code == 400, response.text
    error: dict[str, Any] = response.json()["error"]
    return error


def test_an_unknown_input_item_type_is_a_400_naming_it(app_http: httpx.Client) -> None:
    body = {"model": "sim", "input": [ASK, {"type": "hologram", "id": "h1"}]}
    error = _error(app_http.post("/v1/responses", json=body))
    assert error["param"] == "input[1].type" and error["code"] == "invalid_value" and "hologram" in error["message"]
    error = _error(app_http.post("/v1/responses/input_tokens", json=body))
    assert error["param"] == "input[1].type"
    conversation = app_http.post("/v1/conversations", json={}).json()["id"]
    added = app_http.post(f"/v1/conversations/{conversation}/items", json={"items": [{"type": "computer_call_output"}]})
    assert _error(added)["param"] == "items[0].type"
    kept = app_http.post("/v1/responses", json={"model": "sim", "input": [ASK, {"type": "acme:note", "x": 1}]})
    assert kept.status_code == 200, kept.text  # vendor-prefixed: an extension, kept


def test_tools_in_additional_tools_are_offered_and_called(app_client: openai.OpenAI) -> None:
    lite = app_client.responses.create(model="sim", input=[LITE_TOOLS, ASK], tool_choice="auto",  # type: ignore[list-item]
                                       parallel_tool_calls=False)  # fmt: skip
    (call,) = [item for item in lite.output if item.type == "function_call"]
    assert call.name == "get_weather" and call.namespace == "functions" and "Paris" in call.arguments
    bare = app_client.responses.input_tokens.count(model="sim", input=[ASK])  # type: ignore[list-item]
    offered = app_client.responses.input_tokens.count(model="sim", input=[LITE_TOOLS, ASK])  # type: ignore[list-item]
    assert offered.input_tokens > bare.input_tokens  # the definitions reach the model
    # The next turn sends the result only: the tools still stand (they are in the chain's history).
    answered = app_client.responses.create(
        model="sim", previous_response_id=lite.id,
        input=[{"type": "function_call_output", "call_id": call.call_id, "output": "Sunny, 21 C"}])  # fmt: skip
    assert answered.status == "completed" and "21" in answered.output_text
    again = app_client.responses.create(model="sim", previous_response_id=answered.id, input=[LITE_TOOLS, ASK])  # type: ignore[list-item]
    assert [item.name for item in again.output if item.type == "function_call"] == [
        "get_weather"
    ]  # resent: no duplicate
    items = app_client.responses.input_items.list(lite.id).data
    assert items[-1].type == "additional_tools"  # newest first: the item is kept as sent


@pytest.mark.parametrize(
    ("tool", "param"),
    [({"type": "web_search"}, "input[0].tools[0].type"),
     ({"type": "function", "name": "f", "parameters": {"type": "nonsense"}}, "input[0].tools[0].parameters")],
)  # fmt: skip
def test_a_tool_additional_tools_cannot_offer_is_a_400_naming_it(app_http: httpx.Client, tool: dict[str, Any],
                                                                 param: str) -> None:  # fmt: skip
    body = {"model": "sim", "input": [{"type": "additional_tools", "role": "developer", "tools": [tool]}, ASK]}
    assert _error(app_http.post("/v1/responses", json=body))["param"].startswith(param)


def test_reasoning_context_says_which_earlier_reasoning_the_model_reads(app_client: openai.OpenAI) -> None:
    first = app_client.responses.create(model="o4-mini", input="Plan a trip to Rome.",
                                        reasoning={"effort": "low", "summary": "auto"})  # fmt: skip
    assert any(item.type == "reasoning" and item.summary for item in first.output)

    def count(context: str | None) -> int:
        reasoning: dict[str, Any] = {"effort": "low"} if context is None else {"effort": "low", "context": context}
        return app_client.responses.input_tokens.count(model="o4-mini", previous_response_id=first.id,
                                                       input="And then Florence?", reasoning=reasoning).input_tokens  # type: ignore[arg-type]  # fmt: skip

    # A new user message starts a new turn: only all_turns shows the first turn's reasoning (auto shows
    # none either, though the item stays in what the simulator counts as a turn's frame: >=).
    assert count("all_turns") > count("auto") >= count("current_turn") and count("auto") == count(None)
    echoed = app_client.responses.create(model="o4-mini", previous_response_id=first.id, input="And Florence?",
                                         reasoning={"effort": "low", "context": "all_turns"})  # fmt: skip
    assert echoed.reasoning is not None and echoed.reasoning.context == "all_turns"
