"""The agentic loop, one outcome per scripted turn (``run/_loop.py``, ``run/_outcomes.py``), in process:
what each turn's end leads to, read from the response and from the model requests the server made."""

from __future__ import annotations

import json

from responsa.backends import Finish, RefusalDelta
from responsa.engine.responses.run._loop import MAX_ROUNDS
from tests.in_process import InProcess
from tests.scripted import USAGE, ScriptedBackend, call, store_of, text

LOOKUP = {"type": "function", "name": "lookup", "parameters": {"type": "object"}}


def test_final_a_text_turn_ends_the_response(scripted: tuple[InProcess, ScriptedBackend]) -> None:
    app, model = scripted
    model.turns.append(text("Done."))
    made = app.sdk.responses.create(model="scripted", input="Go", tools=[LOOKUP])  # type: ignore[list-item]
    assert made.status == "completed" and made.output_text == "Done." and len(model.requests) == 1
    assert made.output[0].phase == "final_answer"  # type: ignore[union-attr]


def test_needs_client_a_client_call_ends_the_response_waiting_for_its_output(
    scripted: tuple[InProcess, ScriptedBackend],
) -> None:
    app, model = scripted
    model.turns.append(call("lookup", '{"q": 1}'))
    made = app.sdk.responses.create(model="scripted", input="Go", tools=[LOOKUP])  # type: ignore[list-item]
    assert made.status == "completed" and [item.type for item in made.output] == ["function_call"]
    assert len(model.requests) == 1  # the model is not asked again: the client runs the call


def test_again_until_max_tool_calls_then_the_model_may_only_answer(scripted: tuple[InProcess, ScriptedBackend]) -> None:
    app, model = scripted
    store = store_of(app, ("tides.txt", b"The moon's gravity makes the tides."))
    search = call("file_search", json.dumps({"query": "tides"}))
    model.turns.extend([search, search, text("The moon.")])
    made = app.sdk.responses.create(model="scripted", input="Why?", max_tool_calls=2,
                                    tools=[{"type": "file_search", "vector_store_ids": [store]}])  # fmt: skip
    assert [item.type for item in made.output] == ["file_search_call", "file_search_call", "message"]
    assert [request.tool_mode for request in model.requests][-1] == "none"  # the budget spent: text only
    assert model.requests[0].tool_mode != "none" and made.usage is not None and made.usage.output_tokens == 15


def test_the_last_round_may_not_call_tools(scripted: tuple[InProcess, ScriptedBackend]) -> None:
    app, model = scripted
    store = store_of(app, ("tides.txt", b"The moon's gravity makes the tides."))
    model.turns.extend([call("file_search", json.dumps({"query": "tides"}))] * (MAX_ROUNDS - 1))
    model.turns.append(text("Enough searching."))
    made = app.sdk.responses.create(model="scripted", input="Why?",
                                    tools=[{"type": "file_search", "vector_store_ids": [store]}])  # fmt: skip
    assert len(model.requests) == MAX_ROUNDS and model.requests[-1].tool_mode == "none"
    assert {request.tool_mode for request in model.requests[:-1]} != {"none"}
    assert made.status == "completed" and made.output_text == "Enough searching."


def test_a_refusal_turn_is_stored_as_a_refusal(scripted: tuple[InProcess, ScriptedBackend]) -> None:
    app, model = scripted
    model.turns.append([RefusalDelta("I won't."), Finish("stop", USAGE)])
    made = app.sdk.responses.create(model="scripted", input="Do the bad thing")
    assert made.status == "completed" and made.output_text == ""
    stored = app.sdk.responses.retrieve(made.id).output[0]
    assert stored.type == "message" and stored.content[0].type == "refusal"
    assert stored.content[0].refusal == "I won't."  # type: ignore[union-attr]
