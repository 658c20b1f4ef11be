"""The embedded models' backends, made in the process that serves them: each worker's own (one
process), or one process of their own that every worker of ``--workers N`` reaches over a UNIX socket
(``backends.remote``), so the weights are in memory once and the requests of all workers are decoded
together in its slots. The parent starts that process before the workers and restarts it if it dies."""

from __future__ import annotations

import asyncio
import logging
import multiprocessing
import signal
import threading
import time
from pathlib import Path

from responsa.backends import Backend, Sampling
from responsa.backends.llama_cpp import LlamaCppBackend
from responsa.backends.remote import remote_backends, serve_backends
from responsa.config import Settings

from ._parent import end_with_the_parent

__all__ = ["ModelProcess", "embedded_backends", "has_embedded"]

logger = logging.getLogger(__name__)

START_TIMEOUT = 60.0
"""Seconds the model process may take to answer (the models themselves load on first use)."""


def has_embedded(settings: Settings) -> bool:
    """Whether the server serves any embedded model (the packaged one, or a --model)."""
    return settings.embedded or bool(settings.embedded_models)


class ModelProcess:
    """The embedded models in a process of their own, for as long as the workers run."""

    def __init__(self, settings: Settings, path: Path) -> None:
        self.settings, self.path = settings, path
        self._process: multiprocessing.process.BaseProcess | None = None
        self._stopping = threading.Event()
        self._watcher = threading.Thread(target=self._watch, daemon=True, name="model process watcher")

    def start(self) -> None:
        """Start it and wait until it answers; then keep it running (restarted if it dies)."""
        self._spawn()
        self._watcher.start()

    def _spawn(self) -> None:
        self.path.unlink(missing_ok=True)
        process = multiprocessing.get_context("spawn").Process(
            target=run_model_process, args=(self.settings, self.path), name="responsa-models"
        )
        process.start()
        self._process = process
        deadline = time.monotonic() + START_TIMEOUT
        while not _answers(self.path):
            if not process.is_alive() or time.monotonic() > deadline:
                raise RuntimeError(f"the model process did not start (exit code {process.exitcode})")
            time.sleep(0.05)
        logger.info("the embedded models are served by process %s for every worker", process.pid)

    def _watch(self) -> None:
        while not self._stopping.wait(1.0):
            if self._process is not None and not self._process.is_alive():
                logger.error("the model process died (exit code %s): starting it again", self._process.exitcode)
                try:
                    self._spawn()
                except RuntimeError as error:
                    logger.error("%s", error)

    def stop(self) -> None:
        self._stopping.set()
        if self._process is not None and self._process.is_alive():
            self._process.terminate()
            self._process.join(10)
            if self._process.is_alive():
                self._process.kill()
                self._process.join()


def _answers(path: Path) -> bool:
    try:
        asyncio.run(remote_backends(path))
    except Exception:
        return False
    return True


def run_model_process(settings: Settings, path: Path) -> None:
    """The model process: serve the embedded backends on ``path`` until terminated (an interrupt at
    the terminal is the parent's to act on)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    end_with_the_parent()
    logging.basicConfig(level=settings.log_level.upper())
    asyncio.run(serve_backends(embedded_backends(settings), path))


def embedded_backends(settings: Settings) -> list[Backend]:
    """The packaged model (unless turned off) and every ``--model``, each on its own inference thread."""
    template = settings.chat_template.read_text() if settings.chat_template else None
    backends: list[Backend] = []
    if settings.embedded:
        backends.append(
            LlamaCppBackend(
                settings.gguf,
                n_ctx=settings.embedded_context,
                n_threads=settings.threads,
                n_gpu_layers=settings.gpu_layers,
                chat_template=template,
                parallel=settings.parallel,
            )
        )
    for model in settings.embedded_models:
        if model.path is None:
            raise ValueError(f"model {model.source!r} was not fetched before the server started")
        defaults = Sampling(**dict(model.sampling))  # type: ignore[arg-type]  # numbers under SAMPLING_CONTROLS only
        backends.append(
            LlamaCppBackend(
                model.path,
                name=model.name,
                n_ctx=model.context or settings.embedded_context,
                sampling=defaults,
                n_threads=model.threads or settings.threads,
                n_gpu_layers=settings.gpu_layers if model.gpu_layers is None else model.gpu_layers,
                chat_template=model.chat_template.read_text() if model.chat_template else template,
                parallel=model.parallel or settings.parallel,
                mmproj=model.mmproj_path,
            )
        )
    return backends
