"""Which backend serves which model name."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

import anyio

from responsa.protocol import Capability, InvalidRequest

from ._abilities import Moderates, Spreads
from ._base import Backend, WorkerState

__all__ = ["BackendRegistry", "ServedModel"]


@dataclass(frozen=True)
class ServedModel:
    """What the server knows of one model it serves, as model catalogs tell clients."""

    name: str
    context_window: int | None
    reads_images: bool
    efforts: tuple[str, ...] = ()
    default_effort: str | None = None


class BackendRegistry:
    """Maps model names to backends; the first backend to claim a name serves it."""

    def __init__(self, backends: Iterable[Backend]) -> None:
        self._backends = list(backends)
        self._by_model: dict[str, Backend] = {}
        self._moderators: dict[str, Moderates] = {}
        for backend in self._backends:
            for model in backend.models():
                self._by_model.setdefault(model, backend)
            if isinstance(backend, Moderates):
                for model in backend.moderation_models():
                    self._moderators.setdefault(model, backend)

    def resolve(self, model: str) -> Backend:
        """The backend for ``model``, or a 400 ``model_not_found``."""
        try:
            return self._by_model[model]
        except KeyError:
            raise InvalidRequest(
                f"The requested model '{model}' does not exist.", param="model", code="model_not_found"
            ) from None

    def find(self, model: str) -> Backend | None:
        """The backend for ``model``, or None."""
        return self._by_model.get(model)

    def models(self) -> list[str]:
        """Every model name served, in registration order."""
        return list(self._by_model)

    def moderator(self, model: str) -> Moderates | None:
        """The backend serving ``model`` as a moderation model, or None."""
        return self._moderators.get(model)

    def moderation_models(self) -> list[str]:
        """Every moderation model served, in registration order (the first is the default)."""
        return list(self._moderators)

    def described(self) -> list[ServedModel]:
        """Every model served, in registration order, as the backend serving it describes it."""
        described: list[ServedModel] = []
        for name, backend in self._by_model.items():
            efforts, default = backend.reasoning_efforts(name)
            window, images = backend.context_window(name), backend.reads_images(name)
            described.append(ServedModel(name, window, images, tuple(efforts), default))
        return described

    async def capabilities(self) -> list[Capability]:
        """What each backend found it can do at start."""
        return [capability for backend in self._backends for capability in await backend.capabilities()]

    def workers(self) -> list[WorkerState]:
        """Every upstream worker and how it is doing (for metrics and the console's server page)."""
        return [worker for backend in self._backends if isinstance(backend, Spreads) for worker in backend.workers()]

    async def monitor(self) -> None:
        """Run every backend's background upkeep until cancelled."""
        async with anyio.create_task_group() as group:
            for backend in self._backends:
                group.start_soon(backend.monitor)

    async def aclose(self) -> None:
        for backend in self._backends:
            await backend.aclose()
