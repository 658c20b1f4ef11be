"""The one thread that owns a llama.cpp model: jobs come in through a queue, tokens go out to the
event loop as they are sampled. llama.cpp's model and context are not thread-safe, so nothing else
touches them; concurrent jobs are decoded together in slots (see _slots.py)."""

from __future__ import annotations

import logging
import os
import queue
import threading
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING

from responsa.backends._base import ModelEvent, ModelRequest, Sampling, check_fits
from responsa.protocol import ResponsaError

from ._media import MEDIA_MARKER, MediaPrompt, Projector, request_images
from ._output_grammar import forces_call, output_grammar
from ._slots import Generation, SlotDecoder, sampler_chain
from ._template import ChatTemplate
from ._writer import OutputWriter

if TYPE_CHECKING:
    from llama_cpp import _internals

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
    """Loads the model on first use and decodes up to ``parallel`` jobs at once (one slot each);
    the rest wait their turn, in order."""

    def __init__(
        self,
        model_path: Path,
        n_ctx: int = 4096,
        n_threads: int | None = None,
        n_gpu_layers: int = 0,
        sampling: Sampling | None = None,
        chat_template: str | None = None,
        parallel: int = 1,
        default_cap: int | None = None,
        mmproj: Path | None = None,
    ) -> None:
        self.model_path = model_path
        self.mmproj = mmproj
        """The multimodal projector that lets the model read images (None: text only)."""
        self.default_cap = default_cap
        """The server's own ``max_output_tokens`` for requests that set none: it shrinks to the room a long
        prompt leaves instead of refusing it, as no cap at all would."""
        self.n_gpu_layers = n_gpu_layers
        self.chat_template = chat_template
        """Jinja used instead of the GGUF's ``tokenizer.chat_template``."""
        self.sampling = sampling or Sampling()
        """Defaults for the controls a request leaves out."""
        self.n_ctx = n_ctx
        """Each slot's context window."""
        self.parallel = parallel
        self.n_threads = n_threads or os.cpu_count() or 1
        self._jobs: queue.SimpleQueue[Job | None] = queue.SimpleQueue()
        self._thread: threading.Thread | None = None
        self._model: _internals.LlamaModel | None = None
        self._projector: Projector | None = None
        self._decoder: SlotDecoder
        self._template: ChatTemplate
        self._lock = threading.Lock()

    def submit(self, job: Job) -> None:
        with self._lock:
            if self._thread is None:
                self._thread = threading.Thread(target=self._loop, name="llama-cpp-inference", daemon=True)
                self._thread.start()
        self._jobs.put(job)

    def stop(self) -> None:
        """End the generations at their next token and the thread (blocking): the model must not be
        freed, nor the interpreter exit, while llama.cpp still works on it."""
        with self._lock:
            thread, self._thread = self._thread, None
        if thread is not None:
            self._jobs.put(None)
            thread.join()

    def _loop(self) -> None:
        waiting: deque[Job] = deque()
        while True:
            busy = bool(waiting) or (self._model is not None and self._decoder.active())
            for job in self._take(block=not busy):
                if job is None:
                    if self._model is not None:
                        self._decoder.stop_all()
                    if self._projector is not None:
                        self._projector.free()
                    return
                if job.count_only:
                    self._begin(job)  # tokenizing needs no slot: never behind the generations
                elif not job.cancelled.is_set():  # its client left while it waited in the queue
                    waiting.append(job)
            while waiting and (self._model is None or self._decoder.has_room()):
                self._begin(waiting.popleft())
            if self._model is not None and self._decoder.active():
                self._decoder.step()

    def _take(self, block: bool) -> list[Job | None]:
        """The jobs that have arrived (waiting for one when there is nothing else to do)."""
        jobs: list[Job | None] = []
        try:
            jobs.append(self._jobs.get(block=block))
            while True:
                jobs.append(self._jobs.get_nowait())
        except queue.Empty:
            return jobs

    def _load(self) -> _internals.LlamaModel:
        if self._model is None:
            import llama_cpp
            from llama_cpp import _internals

            logger.info("loading %s (n_ctx=%d x %d slots, n_threads=%d, n_gpu_layers=%d)", self.model_path,
                        self.n_ctx, self.parallel, self.n_threads, self.n_gpu_layers)  # fmt: skip
            logging.getLogger("llama-cpp-python").setLevel(logging.ERROR)  # llama.cpp's own chatter (as Llama does)
            params = llama_cpp.llama_model_default_params()
            params.n_gpu_layers = self.n_gpu_layers
            model = _internals.LlamaModel(path_model=str(self.model_path), params=params, verbose=False)
            if self.mmproj is not None:
                self._projector = Projector(self.mmproj, model, self.n_threads, use_gpu=self.n_gpu_layers != 0)
            marker = MEDIA_MARKER if self._projector is not None else None
            self._template = ChatTemplate.of(model, self.chat_template, marker)
            self._decoder = SlotDecoder(model, self.n_ctx, self.parallel, self.n_threads, self._template.marker_tokens)
            self._model = model
        return self._model

    def _begin(self, job: Job) -> None:
        """Fit the job's prompt and start it in a slot (a count-only job ends there); errors go to the job."""
        media: MediaPrompt | None = None
        try:
            model = self._load()
            request = job.request
            forced = forces_call(request)
            template = self._template
            prompt = template.render(request, describe_tools=not forced and request.tool_mode == "auto")
            media = self._media(request, prompt)
            if media is not None:  # the image chunks' places hold no token: -1, never matched in a cache
                tokens = [-1] * media.head_tokens + media.tail
            else:
                tokens = model.tokenize(prompt.encode("utf-8"), add_bos=True, special=True)
            if job.count_only:
                if media is not None:
                    media.free()
                job.emit(Started(len(tokens)))
                return
            asked = request.max_output_tokens
            check_fits(len(tokens), None if asked == self.default_cap else asked, self.n_ctx)
            budget = self.n_ctx - len(tokens)
            sampling = request.sampling.or_defaults(self.sampling)
            grammar = output_grammar(request, template)
            if grammar is not None and request.sampling.repetition_penalty is None:
                # A model's default penalty is for prose: under a grammar (JSON, a call) it would push
                # against the quotes and braces the output must repeat.
                sampling = replace(sampling, repetition_penalty=None)
            sampler = sampler_chain(model, sampling, grammar)
            writer = OutputWriter(job.emit, request, forced, template, thinking=template.opens_thinking(prompt))
            generation = Generation(
                tokens, sampler, writer, limit=min(request.max_output_tokens or budget, budget), report=job.emit,
                cancelled=job.cancelled,
                fresh=sampling.seed is not None or media is not None or not request.reuse_prefix,
                ignore_eos=sampling.ignore_eos,
                top_logprobs=request.logprobs, special=not request.skip_special_tokens, media=media,
            )  # fmt: skip
        except BaseException as exc:  # the event loop side turns it into a response error
            if media is not None:
                media.free()
            if not isinstance(exc, ResponsaError):
                logger.exception("llama.cpp could not start a generation")
            job.emit(exc)
            return
        job.emit(Started(len(tokens)))
        self._decoder.start(generation)

    def _media(self, request: ModelRequest, prompt: str) -> MediaPrompt | None:
        """The prompt cut around its images by the projector, when the conversation has any."""
        if self._projector is None:
            return None
        images = request_images(request)
        return self._projector.tokenize(prompt, images) if images else None
