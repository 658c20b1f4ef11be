"""The one thread that owns the llama.cpp model: jobs come in through a queue, tokens go out to the
event loop as they are sampled. llama.cpp's model object is not thread-safe, so nothing else touches it."""

from __future__ import annotations

import codecs
import logging
import os
import queue
import threading
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING

from responsa.backends._base import FinishReason, ModelEvent, ModelRequest, Sampling, TokenUsage, check_fits

from ._output_grammar import forced_schema, output_grammar
from ._template import ChatTemplate
from ._writer import OutputWriter

if TYPE_CHECKING:
    from llama_cpp import Llama

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

    def __init__(
        self,
        model_path: Path,
        n_ctx: int = 4096,
        n_threads: int | None = None,
        n_gpu_layers: int = 0,
        sampling: Sampling | None = None,
        chat_template: str | None = None,
    ) -> None:
        self.model_path = model_path
        self.n_gpu_layers = n_gpu_layers
        self.chat_template = chat_template
        """Jinja used instead of the GGUF's ``tokenizer.chat_template``."""
        self.sampling = sampling or Sampling()
        """Defaults for the controls a request leaves out."""
        self.n_ctx = n_ctx
        self.n_threads = n_threads or os.cpu_count() or 1
        self._jobs: queue.SimpleQueue[Job | None] = queue.SimpleQueue()
        self._thread: threading.Thread | None = None
        self._llm: Llama | None = None
        self._template: ChatTemplate
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

            logger.info("loading %s (n_ctx=%d, n_threads=%d, n_gpu_layers=%d)", self.model_path, self.n_ctx,
                        self.n_threads, self.n_gpu_layers)  # fmt: skip
            self._llm = Llama(
                model_path=str(self.model_path), n_ctx=self.n_ctx, n_threads=self.n_threads,
                n_gpu_layers=self.n_gpu_layers, verbose=False,
            )  # fmt: skip
            self._template = ChatTemplate.of(self._llm, self.chat_template)
        return self._llm

    def _run(self, job: Job) -> None:
        from llama_cpp import Llama, llama_vocab_is_eog

        llm = self._model()
        request = job.request
        forced = forced_schema(request) is not None
        template = self._template
        prompt = template.render(request, describe_tools=not forced and request.tool_mode == "auto")
        tokens = llm.tokenize(prompt.encode("utf-8"), add_bos=True, special=True)
        if job.count_only:
            job.emit(Started(len(tokens)))
            return
        check_fits(len(tokens), request.max_output_tokens, self.n_ctx)
        budget = self.n_ctx - len(tokens)
        grammar = output_grammar(request, template)
        job.emit(Started(len(tokens)))
        limit = min(request.max_output_tokens or budget, budget)
        writer = OutputWriter(job.emit, request, forced, template, thinking=template.opens_thinking(prompt))
        sampling = _with_defaults(request.sampling, self.sampling)
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
            piece = llm.detokenize([token], special=token in template.marker_tokens)
            if not end_of_sequence and writer.text(decoder.decode(piece)):
                break
            if produced >= limit:
                reason = "length"
                break
        writer.text(decoder.decode(b"", final=True))
        writer.close(reason, TokenUsage(input_tokens=len(tokens), output_tokens=produced, cached_tokens=cached))


def _with_defaults(sampling: Sampling, defaults: Sampling) -> Sampling:
    """``sampling`` with each control it leaves out (None) taken from ``defaults``."""
    unset = {
        name: getattr(defaults, name)
        for name in (
            "temperature",
            "top_p",
            "top_k",
            "min_p",
            "repetition_penalty",
            "frequency_penalty",
            "presence_penalty",
        )
        if getattr(sampling, name) is None
    }
    return replace(sampling, **unset)
