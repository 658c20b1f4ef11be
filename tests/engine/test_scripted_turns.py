"""A server-run kind driven with given arguments, through the in-process seam and a scripted model:
the file search runs the query the model wrote, records it, and the next turn reads its passages."""

from __future__ import annotations

import json

from responsa.protocol import FunctionCallOutput, ModelError
from tests.in_process import InProcess
from tests.scripted import ScriptedBackend, call, store_of, text


def test_the_file_search_runs_the_query_the_model_wrote(scripted: tuple[InProcess, ScriptedBackend]) -> None:
    app, model = scripted
    store = store_of(app, ("tides.txt", b"The moon's gravity pulls the oceans and makes the tides."),
                      ("bread.txt", b"Yeast makes bread rise by releasing carbon dioxide."))  # fmt: skip
    model.turns.extend([call("file_search", json.dumps({"query": "what makes the tides"})), text("The moon.")])
    made = app.sdk.responses.create(model="scripted", input="Why tides?", include=["file_search_call.results"],
                                    tools=[{"type": "file_search", "vector_store_ids": [store]}])  # fmt: skip
    search, answer = made.output
    assert search.type == "file_search_call" and search.queries == ["what makes the tides"]
    assert search.results and search.results[0].filename == "tides.txt"  # ranked by the given query
    assert answer.type == "message" and made.output_text == "The moon."
    offered = [tool.name for tool in model.requests[0].tools]
    assert offered == ["file_search"]  # the kind offered its function to the model
    shown = [item for item in model.requests[1].items if isinstance(item, FunctionCallOutput)]
    assert "gravity" in str(shown[0].output)  # the second turn read the passages found


def test_a_model_failure_at_a_given_turn_fails_the_response_and_keeps_what_came_before(
    scripted: tuple[InProcess, ScriptedBackend],
) -> None:
    app, model = scripted
    model.turns.extend([call("lookup", "{}"), ModelError("the model broke")])
    first = app.sdk.responses.create(model="scripted", input="Go", tools=[
        {"type": "function", "name": "lookup", "parameters": {"type": "object"}}])  # fmt: skip
    assert [item.type for item in first.output] == ["function_call"] and first.output[0].arguments == "{}"
    reply = app.http.post("/v1/responses", json={"model": "scripted", "previous_response_id": first.id,
                                                 "input": [{"type": "function_call_output", "call_id": "call_scripted",
                                                            "output": "42"}]})  # fmt: skip
    assert reply.status_code == 500 and "the model broke" in reply.json()["error"]["message"]  # before any output
    assert len(model.requests) == 2 and model.requests[1].items[-1].type == "function_call_output"


def test_max_output_tokens_caps_the_response_across_its_tool_loop(scripted: tuple[InProcess, ScriptedBackend]) -> None:
    """OpenAI's cap is the response's: each turn is given what the earlier ones left, and once they
    spent it the response ends ``incomplete`` with the results, the model not asked again."""
    app, model = scripted
    store = store_of(app, ("tides.txt", b"The moon's gravity pulls the oceans and makes the tides."))
    search = call("file_search", json.dumps({"query": "tides"}))  # each scripted turn spends 5 output tokens
    model.turns.extend([search, search, search, search, text("never asked")])
    made = app.sdk.responses.create(model="scripted", input="Why tides?", max_output_tokens=16,
                                    tools=[{"type": "file_search", "vector_store_ids": [store]}])  # fmt: skip
    assert [request.max_output_tokens for request in model.requests] == [16, 11, 6, 1]
    assert made.status == "incomplete" and made.incomplete_details is not None
    assert made.incomplete_details.reason == "max_output_tokens"
    assert made.usage is not None and made.usage.output_tokens == 20
    assert [item.type for item in made.output] == ["file_search_call"] * 4 and len(model.turns) == 1


def test_a_server_run_kind_is_forced_by_tool_choice(scripted: tuple[InProcess, ScriptedBackend]) -> None:
    """``tool_choice: {"type": "file_search"}``: the model must call the kind's function, then chooses freely."""
    app, model = scripted
    store = store_of(app, ("tides.txt", b"The moon's gravity pulls the oceans and makes the tides."))
    model.turns.extend([call("file_search", json.dumps({"query": "tides"})), text("The moon.")])
    made = app.sdk.responses.create(model="scripted", input="Why tides?", tool_choice={"type": "file_search"},
                                    tools=[{"type": "file_search", "vector_store_ids": [store]}])  # fmt: skip
    assert [item.type for item in made.output] == ["file_search_call", "message"]
    forced, after = model.requests
    assert (forced.tool_mode, forced.forced_tool) == ("required", "file_search")
    assert after.forced_tool is None  # met once the server ran the call
