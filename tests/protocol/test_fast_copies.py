"""Wire models are copied and dumped past pydantic's Python wrappers (a stream does both several times);
the results must be pydantic's own."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel

from responsa.protocol import (
    FunctionCall,
    LifecycleEvent,
    Message,
    OutputText,
    ResponseObject,
    dump_dict,
    dump_json,
)

MESSAGE = {"type": "message", "id": "msg_1", "role": "assistant", "status": "completed", "x_vendor": {"k": [1]},
           "content": [{"type": "output_text", "text": "hi", "annotations": [], "logprobs": [], "x_part": 2}]}  # fmt: skip
RESPONSE = {"id": "resp_1", "object": "response", "created_at": 1, "status": "completed", "model": "m",
            "output": [MESSAGE, {"type": "function_call", "call_id": "c", "name": "f", "arguments": "{}"}],
            "tools": [], "x_response": "kept"}  # fmt: skip


def _state(model: BaseModel) -> tuple[Any, ...]:
    return (type(model), model.__dict__, model.__pydantic_fields_set__, model.__pydantic_extra__,
            model.__pydantic_private__)  # fmt: skip


def test_a_copy_is_pydantics_copy_and_apart_from_its_original() -> None:
    for model in (Message.model_validate(MESSAGE), ResponseObject.model_validate(RESPONSE),
                  FunctionCall(call_id="c", name="f", arguments="{}"), OutputText(text="t")):  # fmt: skip
        copied = model.model_copy()
        assert _state(copied) == _state(BaseModel.__copy__(model)) and copied == model
        assert copied.__dict__ is not model.__dict__
        assert copied.__pydantic_fields_set__ is not model.__pydantic_fields_set__
        copied.__dict__["status"] = "incomplete"
        copied.__pydantic_fields_set__.add("not_a_field")
        if copied.__pydantic_extra__ is not None:
            copied.__pydantic_extra__["x_new"] = 1
        assert "x_new" not in (model.__pydantic_extra__ or {}) and "not_a_field" not in model.__pydantic_fields_set__
        assert model.__dict__.get("status") != "incomplete"


def test_an_updated_copy_holds_the_update_and_its_original_does_not() -> None:
    message = Message.model_validate(MESSAGE)
    update = {"status": "in_progress", "x_added": True}
    updated = message.model_copy(update=update)
    assert updated.status == "in_progress" and updated.model_extra == {"x_vendor": {"k": [1]}, "x_added": True}
    assert message.status == "completed" and message.model_extra == {"x_vendor": {"k": [1]}}
    assert updated.model_fields_set == message.model_fields_set | {"status", "x_added"}


def test_dumps_are_pydantics() -> None:
    response = ResponseObject.model_validate(RESPONSE)
    event = LifecycleEvent(type="response.completed", response=response, sequence_number=3)
    for model in (response, event, response.output[0], response.output[0].content[0]):  # type: ignore[union-attr]
        assert dump_dict(model) == model.model_dump(mode="json")
        assert dump_json(model) == model.model_dump_json().encode()
