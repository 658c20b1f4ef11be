"""Work that waits apart for its slot (see ``Admission.later``): background runs with a later
completion window, and a batch's lines, which give their slot back when a request needs it."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Sequence
from dataclasses import dataclass
from functools import partial

from ..features._features import FeatureRun
from ..run._run import Run
from ._admission import Admission

__all__ = ["Apart", "turn", "waits_apart"]


@dataclass(frozen=True)
class Apart:
    """How a run waits apart: its ``rank`` among such work (lower first), how long it may wait for a
    slot (``patience``), and, for work that runs again if stopped (a batch's line), ``preempt``: it
    stops the run's caller when a request needs the slot (the run stores nothing)."""

    rank: int
    patience: float
    preempt: Callable[[], None] | None = None


def waits_apart(features: Sequence[FeatureRun]) -> Apart | None:
    """How a run a feature makes wait apart does so (background work with a later completion window,
    see ``_background_windows``); None: it takes the line at once."""
    for feature in features:
        if (waits := feature.waits()) is not None:
            return Apart(*waits)
    return None


async def turn(admission: Admission, run: Run, apart: Apart) -> AsyncIterator[None]:
    """The run's turn: yields once it holds a slot, which its exit stack gives back."""
    preempt = None if apart.preempt is None else partial(_discard, run, apart.preempt)
    async for held in admission.later(run.tenant, apart.rank, apart.patience, preempt):
        run.exit_stack.callback(admission.leave_apart, held)
        yield


def _discard(run: Run, stop: Callable[[], None]) -> bool:
    """Stop a run that will run again, storing nothing of it; False if it has begun to store itself
    (then it is ending anyway, or a stream's row exists that must end properly)."""
    saving = run.saving
    if saving.persisted or saving.recorded is not None or saving.log is not None:
        return False
    saving.discarded = True
    stop()
    return True
