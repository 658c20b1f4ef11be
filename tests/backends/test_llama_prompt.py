"""Tool calls written by a local model, pulled out of its text as it streams (fed in pieces, no IO)."""

from __future__ import annotations

from responsa.backends.llama_cpp._prompt import ParsedCall, ToolCallSplitter


def feed_all(pieces: list[str], names: set[str]) -> list[str | ParsedCall]:
    splitter = ToolCallSplitter(names)
    out: list[str | ParsedCall] = []
    for piece in pieces:
        out += splitter.feed(piece)
    return out + splitter.flush()


def test_text_passes_through_and_calls_are_extracted_across_pieces() -> None:
    pieces = [
        "Let me check.",
        " <tool",
        '_call>{"name": "get_weather", "arg',
        'uments": {"location": "Oslo"}}</tool_',
        "call>",
    ]
    out = feed_all(pieces, {"get_weather"})
    assert "".join(p for p in out if isinstance(p, str)) == "Let me check. "
    assert [p for p in out if isinstance(p, ParsedCall)] == [ParsedCall("get_weather", '{"location": "Oslo"}')]


def test_unknown_tools_and_broken_json_stay_text() -> None:
    out = feed_all(['<tool_call>{"name": "nope", "arguments": {}}</tool_call>', "<tool_call>{oops</tool_call>"], {"f"})
    assert all(isinstance(p, str) for p in out)
    assert "".join(out) == '<tool_call>{"name": "nope", "arguments": {}}</tool_call><tool_call>{oops</tool_call>'  # type: ignore[arg-type]


def test_an_unterminated_call_at_the_end_is_still_parsed() -> None:
    out = feed_all(['<tool_call>{"name": "f", "arguments": {"a": 1}}'], {"f"})
    assert out == [ParsedCall("f", '{"a": 1}')]
