"""What a backend may do besides generating (:class:`~._base.Backend`), each a small protocol a backend
has or has not: embeddings, images, moderation, a summary of its own, workers to spread over. Those who
need an ability ask for it (``isinstance(backend, Draws)``), at start-up or per use, never per token."""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from typing import Protocol, runtime_checkable

from ._base import TokenUsage, WorkerState
from ._images import ImageRequest, ImageUpdate
from ._moderation import ModerationVerdict

__all__ = ["Draws", "Embeds", "Moderates", "Spreads", "Summarizes"]


@runtime_checkable
class Embeds(Protocol):
    """Makes embeddings (for vector stores' hybrid search)."""

    async def embed(self, model: str, texts: Sequence[str]) -> list[list[float]]:
        """One vector per text; a model that makes none is a 400 naming ``model``."""
        ...


@runtime_checkable
class Draws(Protocol):
    """Serves images models (for the ``image_generation`` tool)."""

    def draws(self, model: str) -> bool:
        """Whether ``model`` here is an images model :meth:`generate_image` can draw with."""
        ...

    def generate_image(self, model: str, request: ImageRequest) -> AsyncIterator[ImageUpdate]:
        """Partial images as asked, then the image."""
        ...


@runtime_checkable
class Moderates(Protocol):
    """Serves moderation models (``POST /v1/moderations``, a create's ``moderation``)."""

    def moderation_models(self) -> Sequence[str]:
        """The moderation models it serves."""
        ...

    async def moderate(self, model: str, texts: Sequence[str]) -> list[ModerationVerdict]:
        """One verdict per text, by the moderation model ``model``."""
        ...


@runtime_checkable
class Summarizes(Protocol):
    """Writes a compaction's summary itself, without a model (the simulator)."""

    def summarize(self, transcript: str) -> tuple[str, TokenUsage] | None:
        """A summary of ``transcript``, or None to have the model write it."""
        ...


@runtime_checkable
class Spreads(Protocol):
    """Spreads requests over workers (``/v1/server``, the metrics)."""

    def workers(self) -> list[WorkerState]:
        """Its workers, and how each is doing."""
        ...
