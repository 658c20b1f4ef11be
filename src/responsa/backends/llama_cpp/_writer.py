"""Decoded text of one generation → model events: text, reasoning, streamed arguments of a forced
call, or tool calls read in the model's own format."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import replace
from typing import Any

from responsa.backends._base import (
    Finish,
    FinishReason,
    ModelEvent,
    ModelRequest,
    ReasoningDelta,
    ReasoningSummaryDelta,
    TextDelta,
    TokenUsage,
    ToolCallDelta,
)
from responsa.backends._stops import StopMatcher
from responsa.backends.chat_completions import ThinkSplitter
from responsa.protocol import new_id

from ._template import ChatTemplate
from ._tool_formats import ArgumentsDelta, CallOpened, CallParser, ParsedCall, Piece, whole_calls

__all__ = ["OutputWriter"]


class OutputWriter:
    """Turns decoded text into model events: plain text, forced-call arguments, or parsed tool calls."""

    def __init__(self, emit: Callable[[ModelEvent], None], request: ModelRequest, forced: bool,
                 template: ChatTemplate, thinking: bool) -> None:  # fmt: skip
        """``forced``: a grammar makes the output one call (a named tool's arguments, or any tool's call);
        ``thinking``: the prompt opened a ``<think>`` block."""
        self._emit = emit
        self._request = request
        self._format = template.tool_format
        self._stops = StopMatcher(request.sampling.stop, include=request.sampling.include_stop)
        self._forced_name = request.forced_tool
        self._raw_input = request.forced_tool in request.tool_grammars
        """A custom tool's input is generated as plain text (under its grammar), sent as JSON arguments."""
        self._collect: list[str] | None = [] if forced and self._forced_name is None else None
        """A required call of any tool, in the model's format: read once it is whole."""
        self._calls = 0
        self._streaming: int | None = None
        """The index of the call whose arguments are streaming in."""
        self._names = {tool.name for tool in request.callable_tools()}
        auto = not forced and request.tool_mode == "auto" and bool(self._names)
        self._splitter = CallParser(template.tool_format, self._names) if auto else None
        self._think = ThinkSplitter(thinking) if template.thinks and not forced else None
        self._reasoning_tokens = 0
        self._logprobs: list[dict[str, Any]] = []
        """Entries of tokens whose text has not gone out yet (held back by stop matching)."""

    def logprob(self, entry: dict[str, Any]) -> None:
        """The next token's log probability entry (given before its text)."""
        self._logprobs.append(entry)

    def _taken_logprobs(self) -> tuple[dict[str, Any], ...]:
        taken = tuple(self._logprobs)
        self._logprobs.clear()
        return taken

    def text(self, text: str) -> bool:
        """Pass ``text`` on; True when a stop string ended the output."""
        if self._forced_name is not None or self._collect is not None:
            self._logprobs.clear()  # a call's arguments carry no log probabilities
        if self._forced_name is not None and self._raw_input:
            self._input_piece(self._forced_name, json.dumps(text, ensure_ascii=False)[1:-1])
            return False
        if self._forced_name is not None:
            self._call_piece(self._forced_name, text)
            return False
        if self._collect is not None:
            self._collect.append(text)
            return False
        if text and self._think is not None and self._think.thinking:
            self._reasoning_tokens += 1  # text() is called once a token
        safe, stopped = self._stops.feed(text)
        self._route(safe)
        return stopped

    def _route(self, text: str) -> None:
        if self._think is None:
            self._answer(text)
            return
        self._thought(self._think.feed(text))

    def _thought(self, events: list[ModelEvent]) -> None:
        """Reasoning goes out as it is (as the summary when one was asked for: the model's thinking is
        all it has to show); the answer after it on to the tool-call parser."""
        for event in events:
            if isinstance(event, TextDelta):
                self._answer(event.text)
                continue
            self._logprobs.clear()  # reasoning text carries none
            if self._request.reasoning_summary and isinstance(event, ReasoningDelta):
                self._emit(ReasoningSummaryDelta(event.text))
            else:
                self._emit(event)

    def _answer(self, text: str) -> None:
        if self._splitter is None:
            if text:
                self._emit(TextDelta(text, self._taken_logprobs()))
            return
        for piece in self._splitter.feed(text):
            self._piece(piece)

    def _piece(self, piece: Piece) -> None:
        if isinstance(piece, str):
            self._emit(TextDelta(piece, self._taken_logprobs()))
        elif isinstance(piece, ArgumentsDelta):
            if self._streaming is not None:
                self._emit(ToolCallDelta(self._streaming, piece.text))
        elif self._request.max_tool_calls is None or self._calls < self._request.max_tool_calls:
            arguments = piece.arguments if isinstance(piece, ParsedCall) else ""
            self._emit(ToolCallDelta(self._calls, arguments, name=piece.name, call_id=new_id("call")))
            self._streaming = self._calls if isinstance(piece, CallOpened) else None
            self._calls += 1
        else:
            self._streaming = None  # past max_tool_calls: its arguments go nowhere

    def _call_piece(self, name: str, arguments: str) -> None:
        if self._calls == 0:
            self._calls = 1
            self._emit(ToolCallDelta(0, arguments, name=name, call_id=new_id("call")))
        elif arguments:
            self._emit(ToolCallDelta(0, arguments))

    def _input_piece(self, name: str, encoded: str) -> None:
        """More of a custom tool's JSON arguments (``{"input": "..."}``), opened on the first piece."""
        self._call_piece(name, ('{"input": "' if self._calls == 0 else "") + encoded)

    def close(self, reason: FinishReason, usage: TokenUsage) -> None:
        if self._forced_name is not None and self._raw_input:
            self._input_piece(self._forced_name, '"}')
        elif self._collect is not None:
            self._required("".join(self._collect))
        else:
            self._route(self._stops.flush())
            if self._think is not None:
                self._thought(self._think.flush())
            if self._splitter is not None:
                for piece in self._splitter.flush():
                    self._piece(piece)
        if self._calls and reason == "stop":
            reason = "tool_calls"
        self._emit(Finish(reason, replace(usage, reasoning_tokens=self._reasoning_tokens)))

    def _required(self, text: str) -> None:
        parser = CallParser(self._format, self._names)
        calls = whole_calls(parser.feed(text) + parser.flush())
        if not calls:  # cut short by max_output_tokens
            name, arguments = _required_call(text)
            calls = [ParsedCall(name, arguments)] if name is not None else []
        for call in calls[:1]:  # the grammar allows one
            self._piece(call)


def _required_call(text: str) -> tuple[str | None, str]:
    """The tool name and arguments of a call that ``max_output_tokens`` cut short: the arguments as far
    as they were written (as an upstream passes a cut call on); the name is None if even it was not."""
    name = _CALL_NAME.search(text)
    arguments = _CALL_ARGUMENTS.search(text)
    return (name.group(1) if name else None), (text[arguments.end() :] if arguments else "")


_CALL_NAME = re.compile(r'"name"\s*:\s*"((?:[^"\\]|\\.)*)"')
_CALL_ARGUMENTS = re.compile(r'"(?:arguments|parameters)"\s*:\s*')
