"""Tool calls read from what models of each family write (recorded outputs), fed in small pieces as
tokens arrive; and the format each family's chat template teaches."""

from __future__ import annotations

import json

import pytest

from responsa.backends.llama_cpp._tool_formats import (
    HERMES,
    JSON_ONLY,
    LLAMA3,
    MISTRAL,
    ArgumentsDelta,
    CallOpened,
    CallParser,
    ParsedCall,
    Piece,
    ToolFormat,
    detect_format,
    whole_calls,
)

NAMES = {"get_weather", "get_time"}
PARIS = ParsedCall("get_weather", '{"city": "Paris"}')
TOKYO_TIME = ParsedCall("get_time", '{"timezone": "Asia/Tokyo"}')


def parse(fmt: ToolFormat, output: str, piece: int = 3) -> list[str | ParsedCall]:
    """``output`` fed ``piece`` characters at a time (markers split across pieces), text pieces joined
    and each streamed call put back together."""
    parser = CallParser(fmt, NAMES)
    found: list[Piece] = []
    for at in range(0, len(output), piece):
        found += parser.feed(output[at : at + piece])
    found += parser.flush()
    joined: list[str | ParsedCall] = []
    for item in found:
        if isinstance(item, str) and joined and isinstance(joined[-1], str):
            joined[-1] += item
        elif isinstance(item, str):
            joined.append(item)
        else:
            calls = whole_calls([item])
            if isinstance(item, ArgumentsDelta):
                last = joined[-1]
                assert isinstance(last, ParsedCall)
                joined[-1] = ParsedCall(last.name, last.arguments + item.text)
            else:
                joined += calls
    return joined


@pytest.mark.parametrize(
    ("fmt", "output", "expected"),
    [
        # Qwen2.5 / Hermes 3: tagged JSON, one block per call, text around them passes through.
        (HERMES, '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n</tool_call>', [PARIS]),
        (
            HERMES,
            'Let me check.\n<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n</tool_call>\n'
            '<tool_call>\n{"name": "get_time", "arguments": {"timezone": "Asia/Tokyo"}}\n</tool_call>',
            ["Let me check.\n", PARIS, "\n", TOKYO_TIME],
        ),
        # The end of the output closes a block the model did not (it stopped at its end-of-turn token).
        (HERMES, '<tool_call>{"name": "get_weather", "arguments": {"city": "Paris"}}', [PARIS]),
        # Llama 3.1/3.2: a bare object with "parameters"; several separated by "; "; or after <|python_tag|>.
        (LLAMA3, '{"name": "get_weather", "parameters": {"city": "Paris"}}', [PARIS]),
        (
            LLAMA3,
            '{"name": "get_weather", "parameters": {"city": "Paris"}}; '
            '{"name": "get_time", "parameters": {"timezone": "Asia/Tokyo"}}',
            [PARIS, TOKYO_TIME],
        ),
        (LLAMA3, '<|python_tag|>{"name": "get_weather", "parameters": {"city": "Paris"}}', [PARIS]),
        # Mistral (v3 tokenizer): [TOOL_CALLS] and a JSON list with ids; v11: name[ARGS]{...} per call.
        (MISTRAL, '[TOOL_CALLS] [{"name": "get_weather", "arguments": {"city": "Paris"}, "id": "a1b2c3d4e"}]', [PARIS]),
        (
            MISTRAL,
            '[TOOL_CALLS]get_weather[ARGS]{"city": "Paris"}[TOOL_CALLS]get_time[ARGS]{"timezone": "Asia/Tokyo"}',
            [PARIS, TOKYO_TIME],
        ),
        # The fallback: an answer that is only JSON calls, as an object or a list, arguments possibly a string.
        (JSON_ONLY, '  [{"name": "get_weather", "arguments": "{\\"city\\": \\"Paris\\"}"}]', [PARIS]),
        (JSON_ONLY, '{"name": "get_weather", "arguments": {"city": "Paris"}}\n', [PARIS]),
    ],
)
def test_calls_in_each_familys_words_are_read(fmt: ToolFormat, output: str, expected: list[object]) -> None:
    assert parse(fmt, output) == expected
    assert parse(fmt, output, piece=1) == expected


@pytest.mark.parametrize(
    ("fmt", "output"),
    [
        (HERMES, "The weather in Paris is mild."),
        (HERMES, '<tool_call>{"name": "unknown_tool", "arguments": {}}</tool_call> and more'),
        (LLAMA3, '{"answer": 42}'),  # JSON, but not a call
        (LLAMA3, "[1, 2, 3] are numbers"),
        (MISTRAL, "[TOOL_CALLS]get_weather[ARGS]not json"),
        (JSON_ONLY, '{"name": "get_weather", "arguments": [1]}'),
    ],
)
def test_what_is_not_a_call_of_a_known_tool_stays_text(fmt: ToolFormat, output: str) -> None:
    assert parse(fmt, output) == [output]
    assert parse(fmt, output, piece=1) == [output]


@pytest.mark.parametrize(
    "output",
    ['<tool_call>{"name": "get_weather", "arguments": {"city": ', '[TOOL_CALLS]get_weather[ARGS]{"city": oops'],
)
def test_a_call_cut_short_or_broken_after_its_name_is_kept_as_written(output: str) -> None:
    # Its arguments were already streamed (as an upstream's would be): they stay what the model wrote.
    [call] = parse(MISTRAL if output.startswith("[") else HERMES, output)
    assert isinstance(call, ParsedCall) and call.name == "get_weather" and call.arguments.startswith('{"city": ')


def test_text_streams_before_the_end_unless_the_answer_opens_with_json() -> None:
    parser = CallParser(HERMES, NAMES)
    assert parser.feed("Sunny in ") == ["Sunny in "]
    assert parser.feed("Paris <tool") == ["Paris "]  # a marker may be starting: held back
    assert parser.feed("box>") == ["<toolbox>"]
    held = CallParser(LLAMA3, NAMES)
    assert held.feed('{"name": "get_weather", ') == []
    assert held.flush() == ['{"name": "get_weather", ']


def test_arguments_are_compact_json_objects() -> None:
    [call] = parse(HERMES, '<tool_call>{"name": "get_weather", "arguments": {"city":"Zürich",  "days": 2}}</tool_call>')
    assert isinstance(call, ParsedCall) and json.loads(call.arguments) == {"city": "Zürich", "days": 2}
    assert "Zürich" in call.arguments


@pytest.mark.parametrize(
    ("template", "expected"),
    [
        (
            "{% for tool in tools %}{{ tool | tojson }}{% endfor %}<tool_call>\n{{ call | tojson }}\n</tool_call>",
            HERMES,
        ),
        ("{{ '[AVAILABLE_TOOLS]' }}{{ tools | tojson }}{{ '[TOOL_CALLS]' }}", MISTRAL),
        ("<|start_header_id|>ipython<|end_header_id|>{{ tools }} with its parameters", LLAMA3),
        ("{{ '<|python_tag|>' }}{{ tools }}", LLAMA3),
        ("{% if tools %}{{ tools | tojson }}{% endif %}", JSON_ONLY),
    ],
)
def test_the_format_comes_from_the_template(template: str, expected: ToolFormat) -> None:
    assert detect_format(template) is expected


def test_arguments_stream_as_they_are_written() -> None:
    parser = CallParser(HERMES, NAMES)
    assert parser.feed("Checking.\n<tool_call>\n") == ["Checking.\n"]
    assert parser.feed('{"name": "get_weather", "arguments": {"ci') == [
        CallOpened("get_weather"),
        ArgumentsDelta('{"ci'),
    ]
    assert parser.feed('ty": "Pa"}, "x": 1') == [ArgumentsDelta('ty": "Pa"}')]  # the object closed: the rest waits
    assert parser.feed("}\n</tool_call>") == []
    # Braces inside strings do not close the arguments; Mistral's v11 form streams too.
    mistral = CallParser(MISTRAL, NAMES)
    pieces = mistral.feed('[TOOL_CALLS]get_weather[ARGS]{"city": "}{"') + mistral.feed("}") + mistral.flush()
    assert pieces == [CallOpened("get_weather"), ArgumentsDelta('{"city": "}{"'), ArgumentsDelta("}")]
    # A call whose arguments come before its name is read whole at the end of its block.
    late = CallParser(HERMES, NAMES)
    found = late.feed('<tool_call>{"arguments": {"city": "Paris"}, "name": "get_weather"}') + late.feed("</tool_call>")
    assert found == [PARIS]
