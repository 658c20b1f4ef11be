"""The one thread that owns the llama.cpp model: jobs come in through a queue, tokens go out to the
event loop as they are sampled. llama.cpp's model object is not thread-safe, so nothing else touches it."""

from __future__ import annotations

import codecs
import json
import logging
import os
import queue
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from responsa.backends._base import (
    Finish,
    FinishReason,
    ModelEvent,
    ModelRequest,
    TextDelta,
    TokenUsage,
    ToolCallDelta,
    check_fits,
)
from responsa.backends._stops import StopMatcher
from responsa.protocol import InvalidRequest, JsonObjectFormat, JsonSchemaFormat, ResponsaError, new_id

from ._grammars import GrammarUnsupported, lark_to_gbnf, regex_to_gbnf
from ._prompt import ParsedCall, ToolCallSplitter, required_call_schema, template_messages

if TYPE_CHECKING:
    from llama_cpp import Llama
    from llama_cpp.llama_chat_format import Jinja2ChatFormatter
    from llama_cpp.llama_grammar import LlamaGrammar

__all__ = ["InferenceThread", "Job", "Started"]

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class Started:
    """First message of every job: the prompt fitted and generation begins."""

    prompt_tokens: int


Emit = Callable[[ModelEvent | Started | BaseException], None]


@dataclass
class Job:
    request: ModelRequest
    emit: Emit
    cancelled: threading.Event = field(default_factory=threading.Event)
    count_only: bool = False
    """Only build and tokenize the prompt: :class:`Started` says how long it is, and the job ends."""


class InferenceThread:
    """Loads the model on first use and runs jobs one at a time, in order."""

    def __init__(self, model_path: Path, n_ctx: int = 4096, n_threads: int | None = None) -> None:
        self.model_path = model_path
        self.n_ctx = n_ctx
        self.n_threads = n_threads or os.cpu_count() or 1
        self._jobs: queue.SimpleQueue[Job | None] = queue.SimpleQueue()
        self._thread: threading.Thread | None = None
        self._llm: Llama | None = None
        self._formatter: Jinja2ChatFormatter
        self._lock = threading.Lock()
        self._current: Job | None = None

    def submit(self, job: Job) -> None:
        with self._lock:
            if self._thread is None:
                self._thread = threading.Thread(target=self._loop, name="llama-cpp-inference", daemon=True)
                self._thread.start()
        self._jobs.put(job)

    def stop(self) -> None:
        """Cut the current job short at its next token and end the thread (blocking): the model must not
        be freed, nor the interpreter exit, while llama.cpp still works on it."""
        with self._lock:
            thread, self._thread = self._thread, None
        if thread is not None:
            self._jobs.put(None)
            current = self._current
            if current is not None:
                current.cancelled.set()
            thread.join()

    def _loop(self) -> None:
        while (job := self._jobs.get()) is not None:
            if job.cancelled.is_set():  # its client left while it waited in the queue
                continue
            self._current = job
            try:
                self._run(job)
            except BaseException as exc:  # the event loop side turns it into a response error
                logger.exception("llama.cpp generation failed")
                job.emit(exc)
            finally:
                self._current = None

    def _model(self) -> Llama:
        if self._llm is None:
            from llama_cpp import Llama

            logger.info("loading %s (n_ctx=%d, n_threads=%d)", self.model_path, self.n_ctx, self.n_threads)
            self._llm = Llama(
                model_path=str(self.model_path), n_ctx=self.n_ctx, n_threads=self.n_threads, verbose=False
            )
            self._formatter = _formatter(self._llm)
        return self._llm

    def _run(self, job: Job) -> None:
        from llama_cpp import Llama, llama_vocab_is_eog

        llm = self._model()
        request = job.request
        forced = _forced_schema(request)
        tokens = _prompt_tokens(
            llm, self._formatter, request, describe_tools=forced is None and request.tool_mode == "auto"
        )
        if job.count_only:
            job.emit(Started(len(tokens)))
            return
        check_fits(len(tokens), request.max_output_tokens, self.n_ctx)
        budget = self.n_ctx - len(tokens)
        grammar = _custom_grammar(request) or _grammar(request, forced)
        job.emit(Started(len(tokens)))
        limit = min(request.max_output_tokens or budget, budget)
        writer = _Writer(job, request, forced)
        sampling = request.sampling
        if sampling.seed is not None:
            # Reproducible: evaluate the whole prompt afresh, as reusing the cached prefix can shift logits.
            llm.reset()  # type: ignore[no-untyped-call]
            llm.set_seed(sampling.seed)
        cached = min(Llama.longest_token_prefix(list(llm._input_ids), tokens), max(len(tokens) - 1, 0))
        decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")

        produced = 0
        reason: FinishReason = "stop"
        for token in llm.generate(
            tokens,
            temp=1.0 if sampling.temperature is None else sampling.temperature,
            top_p=1.0 if sampling.top_p is None else sampling.top_p,
            top_k=sampling.top_k or 40,
            min_p=0.05 if sampling.min_p is None else sampling.min_p,
            repeat_penalty=sampling.repetition_penalty or 1.0,
            frequency_penalty=sampling.frequency_penalty or 0.0,
            presence_penalty=sampling.presence_penalty or 0.0,
            grammar=grammar,
        ):
            if job.cancelled.is_set():
                break
            end_of_sequence = llama_vocab_is_eog(llm._model.vocab, token)
            if end_of_sequence and not sampling.ignore_eos:
                break
            produced += 1
            # Past an end of sequence (ignore_eos) there is nothing to show; the token still counts.
            if not end_of_sequence and writer.text(decoder.decode(llm.detokenize([token]))):
                break
            if produced >= limit:
                reason = "length"
                break
        writer.text(decoder.decode(b"", final=True))
        writer.close(reason, TokenUsage(input_tokens=len(tokens), output_tokens=produced, cached_tokens=cached))


class _Writer:
    """Turns decoded text into model events: plain text, forced-call arguments, or parsed tool calls."""

    def __init__(self, job: Job, request: ModelRequest, forced: dict[str, Any] | None) -> None:
        self._job = job
        self._request = request
        self._stops = StopMatcher(request.sampling.stop, include=request.sampling.include_stop)
        self._forced_name = request.forced_tool
        self._raw_input = request.forced_tool in request.tool_grammars
        """A custom tool's input is generated as plain text (under its grammar), sent as JSON arguments."""
        self._collect: list[str] | None = [] if forced is not None and self._forced_name is None else None
        self._calls = 0
        names = {tool.name for tool in request.tools}
        auto = forced is None and request.tool_mode == "auto" and bool(names)
        self._splitter = ToolCallSplitter(names) if auto else None

    def text(self, text: str) -> bool:
        """Pass ``text`` on; True when a stop string ended the output."""
        if self._forced_name is not None and self._raw_input:
            self._input_piece(self._forced_name, json.dumps(text, ensure_ascii=False)[1:-1])
            return False
        if self._forced_name is not None:
            self._call_piece(self._forced_name, text)
            return False
        if self._collect is not None:
            self._collect.append(text)
            return False
        safe, stopped = self._stops.feed(text)
        self._route(safe)
        return stopped

    def _route(self, text: str) -> None:
        if self._splitter is None:
            if text:
                self._job.emit(TextDelta(text))
            return
        for piece in self._splitter.feed(text):
            self._piece(piece)

    def _piece(self, piece: str | ParsedCall) -> None:
        if isinstance(piece, str):
            self._job.emit(TextDelta(piece))
        elif self._request.max_tool_calls is None or self._calls < self._request.max_tool_calls:
            self._job.emit(ToolCallDelta(self._calls, piece.arguments, name=piece.name, call_id=new_id("call")))
            self._calls += 1

    def _call_piece(self, name: str, arguments: str) -> None:
        if self._calls == 0:
            self._calls = 1
            self._job.emit(ToolCallDelta(0, arguments, name=name, call_id=new_id("call")))
        elif arguments:
            self._job.emit(ToolCallDelta(0, arguments))

    def _input_piece(self, name: str, encoded: str) -> None:
        """More of a custom tool's JSON arguments (``{"input": "..."}``), opened on the first piece."""
        self._call_piece(name, ('{"input": "' if self._calls == 0 else "") + encoded)

    def close(self, reason: FinishReason, usage: TokenUsage) -> None:
        if self._forced_name is not None and self._raw_input:
            self._input_piece(self._forced_name, '"}')
        elif self._collect is not None:
            call = json.loads("".join(self._collect) or "{}")
            self._job.emit(ToolCallDelta(0, json.dumps(call.get("arguments", {})), name=call.get("name"),
                                         call_id=new_id("call")))  # fmt: skip
            self._calls = 1
        else:
            self._route(self._stops.flush())
            if self._splitter is not None:
                for piece in self._splitter.flush():
                    self._piece(piece)
        if self._calls and reason == "stop":
            reason = "tool_calls"
        self._job.emit(Finish(reason, usage))


def _forced_schema(request: ModelRequest) -> dict[str, Any] | None:
    """The schema generation must follow when a tool call is mandatory, else None."""
    tools = list(request.tools)
    if request.forced_tool is not None:
        tool = next(t for t in tools if t.name == request.forced_tool)
        return tool.parameters or {"type": "object"}
    if request.tool_mode == "required" and tools:
        return required_call_schema(tools)
    return None


def _custom_grammar(request: ModelRequest) -> LlamaGrammar | None:
    """The grammar of the custom tool the model must call, if it has one; 400 if it cannot be enforced."""
    from llama_cpp.llama_grammar import LlamaGrammar

    found = request.tool_grammars.get(request.forced_tool or "")
    if found is None:
        return None
    syntax, definition = found
    try:
        gbnf = lark_to_gbnf(definition) if syntax == "lark" else regex_to_gbnf(definition)
        return LlamaGrammar.from_string(gbnf, verbose=False)
    except (GrammarUnsupported, ValueError, RuntimeError) as exc:
        raise InvalidRequest(
            f"The grammar of custom tool '{request.forced_tool}' cannot be enforced by the embedded model: {exc}",
            param="tools",
            code="unsupported_grammar",
        ) from exc


def _grammar(request: ModelRequest, forced: dict[str, Any] | None) -> LlamaGrammar | None:
    from llama_cpp.llama_grammar import JSON_GBNF, LlamaGrammar

    try:
        if forced is not None:
            return LlamaGrammar.from_json_schema(json.dumps(forced), verbose=False)
        fmt = request.text_format
        if isinstance(fmt, JsonSchemaFormat):
            return LlamaGrammar.from_json_schema(json.dumps(fmt.schema_), verbose=False)
        if isinstance(fmt, JsonObjectFormat):
            return LlamaGrammar.from_string(JSON_GBNF, verbose=False)
    except (ValueError, RuntimeError) as exc:
        raise InvalidRequest(f"The schema cannot be enforced by a grammar: {exc}", param="text.format") from exc
    return None


def _formatter(llm: Llama) -> Jinja2ChatFormatter:
    """The model's own chat template, compiled once (compiling costs milliseconds)."""
    from llama_cpp.llama_chat_format import Jinja2ChatFormatter

    template = llm.metadata.get("tokenizer.chat_template")
    if not template:
        raise ResponsaError(f"{llm.model_path} has no chat template.")
    model = llm._model
    return Jinja2ChatFormatter(template, model.token_get_text(llm.token_eos()), model.token_get_text(llm.token_bos()))


def _prompt_tokens(
    llm: Llama, formatter: Jinja2ChatFormatter, request: ModelRequest, describe_tools: bool
) -> list[int]:
    prompt = formatter(messages=template_messages(request, describe_tools)).prompt  # type: ignore[arg-type]
    return llm.tokenize(prompt.encode("utf-8"), add_bos=True, special=True)
