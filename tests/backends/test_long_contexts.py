"""Long contexts reach the model whole, turn after turn: their earlier items are the same objects each
turn (the store's caches), and the Chat Completions backend keeps what it translated them into, by
context and by message item (``backends/chat_completions/_memo.py``); what it sends must be exactly
what translating every item again would give."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson
import pytest

from responsa.backends import ModelRequest
from responsa.backends.chat_completions._memo import TranslationMemo
from responsa.backends.chat_completions._translate import chat_body, chat_request
from responsa.protocol import FunctionCall, Item, Message
from tests.backends.test_chat_completions import Rig, start_rig

ANSWER = {"role": "assistant", "content": "hello from upstream"}
CALL = {"type": "function_call", "call_id": "call_1", "name": "get_weather", "arguments": "{}"}
OUTPUT = {"type": "function_call_output", "call_id": "call_1", "output": "sunny"}
TOOL_CALL = {"id": "call_1", "type": "function", "function": {"name": "get_weather", "arguments": "{}"}}
TOOL_MESSAGE = {"role": "tool", "tool_call_id": "call_1", "content": "sunny"}


@pytest.fixture
def rig(tmp_path: Path) -> Iterator[Rig]:
    yield from start_rig(tmp_path)


def _lines(count: int) -> list[dict[str, Any]]:
    return [{"role": "user" if i % 2 == 0 else "assistant", "content": f"line {i}"} for i in range(count)]


def test_long_contexts_sent_again_are_the_same_messages_and_a_joining_call_changes_only_its_turn(rig: Rig) -> None:
    """Two branches of one long chain (their earlier items the same objects, from the store's cache,
    and their chat messages memoised): in one, a function call joins the answer before it; the
    other, sent after, still gets that answer as it was, and both get every message in order."""
    history = [{"role": "user" if i % 2 == 0 else "assistant", "content": f"line {i}"} for i in range(70)]
    root = rig.sdk.responses.create(model="up-model", input=history, instructions="Be brief.")
    expected = [{"role": "system", "content": "Be brief."}, *history]
    answer = {"role": "assistant", "content": "hello from upstream"}
    assert rig.first.requests[-1]["messages"] == expected
    first = rig.sdk.responses.create(model="up-model", input="plain", previous_response_id=root.id)
    assert rig.first.requests[-1]["messages"] == [*expected[1:], answer, {"role": "user", "content": "plain"}]
    call = {"type": "function_call", "call_id": "call_1", "name": "get_weather", "arguments": "{}"}
    output = {"type": "function_call_output", "call_id": "call_1", "output": "sunny"}
    rig.sdk.responses.create(model="up-model", input=[call, output], previous_response_id=root.id)  # type: ignore[list-item]
    tool_call = {"id": "call_1", "type": "function", "function": {"name": "get_weather", "arguments": "{}"}}
    joined = {**answer, "tool_calls": [tool_call]}
    assert rig.first.requests[-1]["messages"] == [
        *expected[1:],
        joined,
        {"role": "tool", "tool_call_id": "call_1", "content": "sunny"},
    ]
    again = rig.sdk.responses.create(model="up-model", input="plain again", previous_response_id=root.id)
    assert rig.first.requests[-1]["messages"] == [*expected[1:], answer, {"role": "user", "content": "plain again"}]
    rig.sdk.responses.create(model="up-model", input="and on", previous_response_id=first.id)
    assert rig.first.requests[-1]["messages"] == [
        *expected[1:],
        answer,
        {"role": "user", "content": "plain"},
        answer,
        {"role": "user", "content": "and on"},
    ]
    assert again.status == "completed"


def test_a_long_conversation_reaches_the_model_whole_each_turn(rig: Rig) -> None:
    """A conversation's history: what the last turn sent, then that turn's input and answer (read back
    from the database, new objects). A function call joins the answer before it, in its own turn and
    every later one; a second conversation in between changes nothing of the first's."""
    history = _lines(70)
    conversation = rig.sdk.conversations.create()
    other = rig.sdk.conversations.create()
    for start in range(0, len(history), 20):
        rig.sdk.conversations.items.create(conversation.id, items=history[start : start + 20])  # type: ignore[arg-type]
        rig.sdk.conversations.items.create(other.id, items=_lines(80)[start : start + 20])  # type: ignore[arg-type]
    expected = list(history)

    def turn(input: Any, sent: list[dict[str, Any]]) -> None:
        rig.sdk.responses.create(model="up-model", input=input, conversation=conversation.id)
        assert rig.first.requests[-1]["messages"] == sent
        rig.sdk.responses.create(model="up-model", input="elsewhere", conversation=other.id)

    for number in range(3):
        asked = {"role": "user", "content": f"turn {number}"}
        turn(f"turn {number}", [*expected, asked])
        expected += [asked, ANSWER]
    joined = [*expected[:-1], {**ANSWER, "tool_calls": [TOOL_CALL]}, TOOL_MESSAGE]
    turn([CALL, OUTPUT], joined)
    expected = [*joined, ANSWER]
    for number in range(2):
        asked = {"role": "user", "content": f"after {number}"}
        turn(f"after {number}", [*expected, asked])
        expected += [asked, ANSWER]


def test_a_chain_with_an_open_item_and_joining_calls_reaches_the_model_whole(rig: Rig) -> None:
    """What is kept of a context stops before an item still open (``in_progress``): the turns after it
    still send it, the function call joining it and the answers after, exactly."""
    history: list[dict[str, Any]] = _lines(70)
    open_answer = {"type": "message", "role": "assistant", "content": "partial", "status": "in_progress"}
    second = {**CALL, "call_id": "call_2"}
    sent = [*history, {"role": "assistant", "content": "partial", "tool_calls": [TOOL_CALL, {**TOOL_CALL, "id": "call_2"}]},
            TOOL_MESSAGE, {**TOOL_MESSAGE, "tool_call_id": "call_2"}]  # fmt: skip
    inputs = [*history, open_answer, CALL, second, OUTPUT, {**OUTPUT, "call_id": "call_2"}]
    reply = rig.sdk.responses.create(model="up-model", input=inputs)  # type: ignore[arg-type]
    assert rig.first.requests[-1]["messages"] == sent
    for number in range(3):
        asked = {"role": "user", "content": f"turn {number}"}
        reply = rig.sdk.responses.create(model="up-model", input=f"turn {number}", previous_response_id=reply.id)
        sent += [ANSWER, asked]
        assert rig.first.requests[-1]["messages"] == sent


def test_an_item_still_being_built_is_translated_again_when_it_changes() -> None:
    """The server's own output items change while they are open (``in_progress``): a context holding
    one, sent again after it changed, gets its new form, messages and JSON alike (the memo is the
    Chat Completions backend's, driven as it drives it; no HTTP request can change an item it sent)."""
    items: list[Item] = [
        Message(id=f"msg_{i}", role="user" if i % 2 == 0 else "assistant", content=f"line {i}", status="completed")
        for i in range(70)
    ]
    building = Message(id="msg_open", role="assistant", content="par", status="in_progress")
    call = FunctionCall(id="fc_1", call_id="call_1", name="get_weather", arguments="{}", status="completed")
    memo = TranslationMemo()
    joined = {"role": "assistant", "content": "par", "tool_calls": [TOOL_CALL]}
    for context, last in (
        ([*items, building, call], joined),
        ([*items, building], {"role": "assistant", "content": "partial"}),
    ):
        request = ModelRequest(model="m", instructions="Be brief.", items=context)
        payload, body = chat_request(request, "served", memo)
        assert payload == chat_body(request, "served") and orjson.loads(body) == payload
        assert payload["messages"][-1] == last
        building.content, building.status = "partial", "completed"  # as the output builder ends it
    open_call = FunctionCall(id="fc_2", call_id="call_2", name="get_weather", arguments="{", status="in_progress")
    for context in ([*items, open_call], items):  # the open call joins the last message, then is gone
        request = ModelRequest(model="m", instructions=None, items=context)
        payload, body = chat_request(request, "served", memo)
        assert orjson.loads(body) == payload == chat_body(request, "served")


def test_a_branch_from_far_back_in_a_long_chain_reaches_the_model_as_its_own(rig: Rig) -> None:
    """A turn that continues an earlier response than the last (a branch) shares only the start of
    the context kept from the last turn, and parts from it far from its end: it gets its own messages,
    none of the other branch's."""
    history = _lines(70)
    first = rig.sdk.responses.create(model="up-model", input=history)  # type: ignore[arg-type]
    other = _lines(40)
    rig.sdk.responses.create(model="up-model", input=other, previous_response_id=first.id)  # type: ignore[arg-type]
    assert rig.first.requests[-1]["messages"] == [*history, ANSWER, *other]
    rig.sdk.responses.create(model="up-model", input="A branch.", previous_response_id=first.id)
    assert rig.first.requests[-1]["messages"] == [*history, ANSWER, {"role": "user", "content": "A branch."}]
