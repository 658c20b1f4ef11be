"""Several generations decoded together in one llama.cpp context, as llama.cpp's server does it.

Each slot is one sequence with its own KV cache (``n_ctx`` tokens each). A step puts every token
that is due into one batch: the last sampled token of each generating slot first, then as much of
waiting prompts as the batch holds; one ``llama_decode`` evaluates them all, and each generating slot
samples its next token from its own row of logits with its own sampler chain. A slot keeps what its
cache holds after its generation ends, so the next turn of a conversation that lands on it evaluates
only what is new.
"""

from __future__ import annotations

import codecs
import ctypes
import logging
import os
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from responsa.backends._base import FinishReason, Sampling, TokenUsage

from ._logprobs import logprob_entry
from ._media import MediaPrompt
from ._writer import OutputWriter

if TYPE_CHECKING:
    from llama_cpp import _internals
    from llama_cpp.llama_grammar import LlamaGrammar

__all__ = ["Generation", "SlotDecoder", "sampler_chain"]

logger = logging.getLogger(__name__)

PENALTY_WINDOW = 256
"""Tokens the repetition penalties look back over: a small model repeats whole paragraphs, which
llama-cpp-python's 64 tokens do not see."""
_BATCH = 512
"""Tokens one decode step evaluates at most (llama.cpp's default ``n_batch``)."""


@dataclass
class Generation:
    """One request's decoding: its prompt, how it samples, and where its text goes."""

    prompt: list[int]
    sampler: _internals.LlamaSampler
    writer: OutputWriter
    limit: int
    """Tokens it may produce (``max_output_tokens``, or what is left of the window)."""
    report: Callable[[BaseException], None]
    """Where a failure goes (the job's event stream)."""
    cancelled: threading.Event = field(default_factory=threading.Event)
    """Checked before every step: set, the generation ends and its slot is free."""
    fresh: bool = False
    """Evaluate the whole prompt afresh (a seeded request: reusing a cached prefix can shift logits)."""
    ignore_eos: bool = False
    top_logprobs: int | None = None
    """Log probabilities asked for, with this many alternatives (None: not asked)."""
    special: bool = False
    """Show every special token's text (``skip_special_tokens: false``), not only the template's markers."""
    media: MediaPrompt | None = None
    """A prompt with images: its head is evaluated by the projector when the generation starts."""
    pending: list[int] = field(default_factory=list)
    """Tokens to evaluate next: the rest of the prompt, then each sampled token."""
    produced: int = 0
    cached: int = 0
    """Prompt tokens found in the slot's cache."""
    decoder: codecs.IncrementalDecoder = field(default_factory=lambda: codecs.getincrementaldecoder("utf-8")("replace"))


@dataclass
class _Slot:
    seq: int
    kv: list[int] = field(default_factory=list)
    """The tokens whose keys and values this sequence holds, in order."""
    generation: Generation | None = None
    last_used: int = 0


class SlotDecoder:
    """``parallel`` sequences in one context on ``model``; driven by one thread (it owns the context)."""

    def __init__(
        self, model: _internals.LlamaModel, n_ctx: int, parallel: int, n_threads: int, markers: frozenset[int]
    ) -> None:
        import llama_cpp
        from llama_cpp import _internals

        params = llama_cpp.llama_context_default_params()
        params.n_ctx = n_ctx * parallel
        params.n_seq_max = parallel
        params.kv_unified = False  # each sequence its own n_ctx: a request that fits always fits
        params.n_batch = params.n_ubatch = _BATCH
        params.n_threads = params.n_threads_batch = n_threads or os.cpu_count() or 1
        self._model = model
        self._context = _internals.LlamaContext(model=model, params=params, verbose=False)
        self._batch = _internals.LlamaBatch(n_tokens=_BATCH, embd=0, n_seq_max=1, verbose=False)
        self._slots = [_Slot(seq) for seq in range(parallel)]
        self._markers = markers
        self._clock = 0

    def has_room(self) -> bool:
        return any(slot.generation is None for slot in self._slots)

    def active(self) -> bool:
        return any(slot.generation is not None for slot in self._slots)

    def start(self, generation: Generation) -> None:
        """Give ``generation`` the free slot whose cache shares the longest prefix with its prompt."""
        import llama_cpp
        from llama_cpp import Llama

        prompt = generation.prompt
        free = [
            (0 if generation.fresh else int(Llama.longest_token_prefix(slot.kv, prompt)), slot)
            for slot in self._slots
            if slot.generation is None
        ]
        shared, slot = max(free, key=lambda pair: (pair[0], -pair[1].last_used))
        keep = min(shared, len(prompt) - 1)  # the last prompt token is decoded again for its logits
        if not llama_cpp.llama_memory_seq_rm(self._context.memory, slot.seq, keep, -1):
            # Some caches (recurrent models, sliding windows) cannot drop just a tail: start afresh.
            llama_cpp.llama_memory_seq_rm(self._context.memory, slot.seq, 0, -1)
            keep = 0
        del slot.kv[keep:]
        generation.cached = keep
        generation.pending = generation.prompt[keep:]
        if generation.media is not None and not self._evaluate_media(slot, generation, generation.media):
            return
        self._clock += 1
        slot.generation, slot.last_used = generation, self._clock

    def _evaluate_media(self, slot: _Slot, generation: Generation, media: MediaPrompt) -> bool:
        """Evaluate the images and the text around them into the (emptied) slot; the last text is left
        to the normal steps. A failure is the generation's, and the slot stays free."""
        import llama_cpp

        try:
            position = media.evaluate_head(self._context.ctx, slot.seq, _BATCH)
        except Exception as exc:
            llama_cpp.llama_memory_seq_rm(self._context.memory, slot.seq, 0, -1)
            slot.kv.clear()
            generation.report(exc)
            return False
        finally:
            media.free()
        slot.kv[:] = [-1] * position  # positions the images and text hold; no token matches them later
        generation.pending = list(media.tail)
        return True

    def stop_all(self) -> None:
        """End every generation now (shutting down)."""
        for slot in self._slots:
            if slot.generation is not None:
                self._finish(slot, "stop")

    def step(self) -> None:
        """One decode of every token due, then a token sampled for each slot whose prompt is done."""
        import llama_cpp

        for slot in self._slots:
            if slot.generation is not None and slot.generation.cancelled.is_set():
                self._finish(slot, "stop")  # its client left or it was cancelled: free the slot now
        due = self._fill()
        if not due:
            return
        status = llama_cpp.llama_decode(self._context.ctx, self._batch.batch)
        if status != 0:
            self._fail(due, RuntimeError(f"llama_decode returned {status}"))
            return
        for slot, taken, row in due:
            generation = slot.generation
            assert generation is not None
            slot.kv += generation.pending[:taken]
            del generation.pending[:taken]
            if generation.pending:
                continue  # more of its prompt next step
            try:
                token = llama_cpp.llama_sampler_sample(generation.sampler.sampler, self._context.ctx, row)
                if generation.top_logprobs is not None:
                    self._logprobs(generation, token, row)
                self._take(slot, generation, token)
            except Exception as exc:  # a broken generation must not take the others down
                logger.exception("llama.cpp generation failed")
                self._fail([(slot, taken, row)], exc)

    def _fill(self) -> list[tuple[_Slot, int, int]]:
        """Put what is due into the batch: (slot, tokens taken, the row of its logits or -1)."""
        batch = self._batch.batch
        due: list[tuple[_Slot, int, int]] = []
        used = 0
        generating = [s for s in self._slots if s.generation is not None and s.generation.produced > 0]
        prompting = [s for s in self._slots if s.generation is not None and s.generation.produced == 0]
        for slot in generating + prompting:  # generating slots first: a long prompt never stalls them
            generation = slot.generation
            assert generation is not None
            taken = min(len(generation.pending), _BATCH - used)
            if taken == 0:
                continue
            for offset in range(taken):
                at = used + offset
                batch.token[at] = generation.pending[offset]
                batch.pos[at] = len(slot.kv) + offset
                batch.n_seq_id[at] = 1
                batch.seq_id[at][0] = slot.seq
                batch.logits[at] = False
            last = used + taken - 1
            done = taken == len(generation.pending)
            batch.logits[last] = done
            due.append((slot, taken, last if done else -1))
            used += taken
        batch.n_tokens = used
        return due

    def _logprobs(self, generation: Generation, token: int, row: int) -> None:
        import llama_cpp

        logits = llama_cpp.llama_get_logits_ith(self._context.ctx, row)
        entry = logprob_entry(logits, self._model.n_vocab(), token, generation.top_logprobs or 0,
                              lambda other: _piece(self._model, other, special=True))  # fmt: skip
        generation.writer.logprob(entry)

    def _take(self, slot: _Slot, generation: Generation, token: int) -> None:
        import llama_cpp

        end = llama_cpp.llama_vocab_is_eog(self._model.vocab, token)
        if end and not generation.ignore_eos:
            self._finish(slot, "stop")
            return
        generation.produced += 1
        # Past an end of sequence (ignore_eos) there is nothing to show; the token still counts.
        piece = b"" if end else _piece(self._model, token, special=generation.special or token in self._markers)
        if generation.writer.text(generation.decoder.decode(piece)):
            self._finish(slot, "stop")
        elif generation.produced >= generation.limit:
            self._finish(slot, "length")
        else:
            generation.pending.append(token)

    def _finish(self, slot: _Slot, reason: FinishReason) -> None:
        generation = slot.generation
        assert generation is not None
        slot.generation = None
        generation.writer.text(generation.decoder.decode(b"", final=True))
        usage = TokenUsage(len(generation.prompt), generation.produced, cached_tokens=generation.cached)
        generation.writer.close(reason, usage)

    def _fail(self, due: list[tuple[_Slot, int, int]], exc: Exception) -> None:
        """The generations in ``due`` end with ``exc``; their caches are dropped (their state is unknown)."""
        import llama_cpp

        for slot, _taken, _row in due:
            generation = slot.generation
            if generation is None:
                continue
            slot.generation = None
            slot.kv.clear()
            llama_cpp.llama_memory_seq_rm(self._context.memory, slot.seq, 0, -1)
            generation.report(exc)


def sampler_chain(
    model: _internals.LlamaModel, sampling: Sampling, grammar: LlamaGrammar | None
) -> _internals.LlamaSampler:
    """One generation's sampler, as llama-cpp-python's ``Llama.generate`` builds it (penalties over the
    last :data:`PENALTY_WINDOW` tokens, the grammar, then greedy at temperature 0, else top-k, top-p,
    min-p, temperature)."""
    import llama_cpp
    from llama_cpp import _internals

    chain = _internals.LlamaSampler()  # type: ignore[no-untyped-call]
    chain.add_penalties(
        model.n_vocab(), PENALTY_WINDOW, sampling.repetition_penalty or 1.0, sampling.frequency_penalty or 0.0,
        sampling.presence_penalty or 0.0,
    )  # fmt: skip
    if grammar is not None:
        chain.add_grammar(model, grammar)
    temperature = 1.0 if sampling.temperature is None else sampling.temperature
    if temperature == 0:
        chain.add_greedy()  # type: ignore[no-untyped-call]
        return chain
    chain.add_top_k(40 if sampling.top_k is None else sampling.top_k)  # 0 or less: every token
    chain.add_top_p(1.0 if sampling.top_p is None else sampling.top_p, 1)
    chain.add_min_p(0.05 if sampling.min_p is None else sampling.min_p, 1)
    chain.add_temp(temperature)
    chain.add_dist(llama_cpp.LLAMA_DEFAULT_SEED if sampling.seed is None else sampling.seed)
    return chain


def _piece(model: _internals.LlamaModel, token: int, special: bool) -> bytes:
    """The bytes of one token (a special token's text only when ``special``)."""
    import llama_cpp

    buffer = ctypes.create_string_buffer(64)
    size = llama_cpp.llama_token_to_piece(model.vocab, token, buffer, 64, 0, special)
    if size < 0:  # longer than the buffer: -size is what it needs
        buffer = ctypes.create_string_buffer(-size)
        size = llama_cpp.llama_token_to_piece(model.vocab, token, buffer, -size, 0, special)
    return buffer.raw[:size]
