"""The output state machine, fed lists of model events (no IO)."""

from __future__ import annotations

from responsa.backends import (
    Finish,
    ReasoningDelta,
    ReasoningSummaryDelta,
    RefusalDelta,
    TextDelta,
    TokenUsage,
    ToolCallDelta,
)
from responsa.engine import OutputBuilder
from responsa.protocol import ModelError, ResponseObject

USAGE = TokenUsage(input_tokens=10, output_tokens=4)


def fresh() -> OutputBuilder:
    return OutputBuilder(ResponseObject(id="resp_1", created_at=0, status="in_progress", model="m"))


def snapshot(builder: OutputBuilder, events: list[object]) -> list[tuple[int, str, int | None]]:
    everything = builder.start()
    for event in events:
        everything += builder.feed(event)  # type: ignore[arg-type]
    everything += builder.complete()
    return [(e.sequence_number, e.type, getattr(e, "output_index", None)) for e in everything]


def test_reasoning_summary_then_text() -> None:
    builder = fresh()
    events = [
        ReasoningSummaryDelta("thinking"),
        ReasoningSummaryDelta(" hard"),
        TextDelta("Hi"),
        TextDelta("!"),
        Finish("stop", USAGE),
    ]
    assert snapshot(builder, events) == [
        (0, "response.created", None),
        (1, "response.in_progress", None),
        (2, "response.output_item.added", 0),
        (3, "response.reasoning_summary_part.added", 0),
        (4, "response.reasoning_summary_text.delta", 0),
        (5, "response.reasoning_summary_text.delta", 0),
        (6, "response.reasoning_summary_text.done", 0),
        (7, "response.reasoning_summary_part.done", 0),
        (8, "response.output_item.done", 0),
        (9, "response.output_item.added", 1),
        (10, "response.content_part.added", 1),
        (11, "response.output_text.delta", 1),
        (12, "response.output_text.delta", 1),
        (13, "response.output_text.done", 1),
        (14, "response.content_part.done", 1),
        (15, "response.output_item.done", 1),
        (16, "response.completed", None),
    ]
    reasoning, message = builder.response.output
    assert reasoning.type == "reasoning" and reasoning.summary[0].text == "thinking hard"
    assert message.type == "message" and message.content[0].text == "Hi!"  # type: ignore[union-attr]
    assert builder.response.status == "completed"
    assert builder.response.usage is not None and builder.response.usage.total_tokens == 14


def test_raw_reasoning_text_is_reasoning_content() -> None:
    builder = fresh()
    events = [ReasoningDelta("Let me"), ReasoningDelta(" see."), TextDelta("4"), Finish("stop", USAGE)]
    assert [t for _, t, _ in snapshot(builder, events)][2:9] == [
        "response.output_item.added",
        "response.content_part.added",
        "response.reasoning_text.delta",
        "response.reasoning_text.delta",
        "response.reasoning_text.done",
        "response.content_part.done",
        "response.output_item.done",
    ]
    reasoning = builder.response.output[0]
    assert reasoning.type == "reasoning" and reasoning.summary == []
    assert reasoning.content is not None and reasoning.content[0].text == "Let me see."


def test_interleaved_tool_calls_become_separate_items() -> None:
    builder = fresh()
    events = [
        ToolCallDelta(0, '{"a"', name="f", call_id="call_a"),
        ToolCallDelta(0, ":1}"),
        ToolCallDelta(1, "{}", name="g", call_id="call_b"),
        Finish("tool_calls", USAGE),
    ]
    types = [t for _, t, _ in snapshot(builder, events)]
    assert types == [
        "response.created",
        "response.in_progress",
        "response.output_item.added",
        "response.function_call_arguments.delta",
        "response.function_call_arguments.delta",
        "response.function_call_arguments.done",
        "response.output_item.done",
        "response.output_item.added",
        "response.function_call_arguments.delta",
        "response.function_call_arguments.done",
        "response.output_item.done",
        "response.completed",
    ]
    first, second = builder.response.output
    assert (first.name, first.call_id, first.arguments) == ("f", "call_a", '{"a":1}')  # type: ignore[union-attr]
    assert (second.name, second.arguments, second.status) == ("g", "{}", "completed")  # type: ignore[union-attr]


def test_length_makes_the_item_and_the_response_incomplete() -> None:
    builder = fresh()
    snapshot(builder, [TextDelta("a"), Finish("length", USAGE)])
    assert builder.response.status == "incomplete"
    assert builder.response.output[0].status == "incomplete"  # type: ignore[union-attr]
    assert builder.response.incomplete_details is not None
    assert builder.response.incomplete_details.reason == "max_output_tokens"


def test_failure_closes_open_items_and_fails_the_response() -> None:
    builder = fresh()
    events = builder.start() + builder.feed(TextDelta("par")) + builder.fail(ModelError("boom"))
    assert [e.type for e in events][-2:] == ["response.output_item.done", "response.failed"]
    assert builder.response.status == "failed"
    assert builder.response.error is not None and builder.response.error.message == "boom"


def test_events_carry_snapshots_not_live_objects() -> None:
    builder = fresh()
    added = builder.start() + builder.feed(TextDelta("x"))
    builder.finish(Finish("stop", USAGE))
    item_added = next(e for e in added if e.type == "response.output_item.added")
    assert item_added.item.status == "in_progress" and item_added.item.content == []  # type: ignore[union-attr]
    assert added[0].response.output == []  # type: ignore[union-attr]


def test_a_server_run_call_is_recorded_for_the_loop_and_nothing_runs_it_here() -> None:
    """The builder only records the call the server runs (the loop takes and runs it): fed a call of
    a server-run kind, it runs nothing; a cancel cuts the call it recorded."""
    from responsa.engine.tools import Route, ToolPlan, ToolRegistry, client_kinds
    from responsa.protocol import FunctionTool
    from tests.engine.tally_kind import Tally, TallyKind

    tally = Tally()
    plan = ToolPlan(ToolRegistry([*client_kinds(), TallyKind(tally)]))
    plan.add(FunctionTool(name="tally", parameters={"type": "object"}), Route("tally", "tally", target=tally), "tools")
    builder = OutputBuilder(ResponseObject(id="resp_1", created_at=0, status="in_progress", model="m"), plan)
    builder.start()
    builder.feed_all([ToolCallDelta(0, '{"label": "x"}', name="tally", call_id="c1"), Finish("tool_calls", USAGE)])
    assert tally.count == 0 and builder.server.waiting == 1 and not builder.needs_client
    ((_call, where),) = builder.server.take()
    assert where["output_index"] == 0 and builder.server.waiting == 0 and tally.count == 0
    ended = builder.cancel()  # taken, never served: cut (an item type without "incomplete" is "failed")
    assert [event.type for event in ended] == ["response.output_item.done"]
    assert builder.response.output[0].status == "failed" and builder.response.status == "cancelled"  # type: ignore[union-attr]


def test_a_refusal_is_its_own_message_and_text_after_it_opens_another() -> None:
    builder = fresh()
    builder.emitter.read = True
    events = [RefusalDelta("No"), RefusalDelta("pe."), TextDelta("But here"), Finish("stop", USAGE)]
    assert snapshot(builder, events) == [
        (0, "response.created", None),
        (1, "response.in_progress", None),
        (2, "response.output_item.added", 0),
        (3, "response.content_part.added", 0),
        (4, "response.refusal.delta", 0),
        (5, "response.refusal.delta", 0),
        (6, "response.refusal.done", 0),
        (7, "response.content_part.done", 0),
        (8, "response.output_item.done", 0),
        (9, "response.output_item.added", 1),
        (10, "response.content_part.added", 1),
        (11, "response.output_text.delta", 1),
        (12, "response.output_text.done", 1),
        (13, "response.content_part.done", 1),
        (14, "response.output_item.done", 1),
        (15, "response.completed", None),
    ]
    refused, answered = builder.response.output
    assert refused.content[0].type == "refusal" and refused.content[0].refusal == "Nope."  # type: ignore[union-attr]
    assert answered.content[0].type == "output_text" and answered.content[0].text == "But here"  # type: ignore[union-attr]
