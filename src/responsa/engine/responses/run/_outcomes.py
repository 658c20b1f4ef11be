"""How a model turn ends, as one small value the loop acts on (computed from the run's state after the
turn and the calls the server ran for it, with no generator in between)."""

from __future__ import annotations

from enum import Enum

from ._run import Run

__all__ = ["Outcome", "outcome_of"]


class Outcome(Enum):
    """What comes after a model turn."""

    AGAIN = "again"
    """The server ran calls (or the client answered its calls into the running response): the model
    reads their results next."""
    NEEDS_CLIENT = "needs_client"
    """A call the client runs, or an approval it gives, ends the response."""
    FINAL = "final"
    """The model answered."""
    CANCELLED = "cancelled"
    """A cancel (or the client leaving) stops the response."""
    STEERED = "steered"
    """Steering stops the response ``incomplete`` (``steered``); its successor starts next."""
    STEERED_AT_CLIENT = "steered_at_client"
    """Steered while it already waits for the client: it ends as it is, the steering with it."""
    INTERRUPTED = "interrupted"
    """The client interrupted it: it ends ``incomplete`` (``interrupted``), partial items dropped."""
    SHUT_DOWN = "shut_down"
    """The server is shutting down: the response fails (``server_shutdown``)."""
    SPENT = "spent"
    """The server ran calls, but the turns spent the response's ``max_output_tokens``: it ends
    ``incomplete`` (``max_output_tokens``) with the calls' results, the model not asked again."""


def outcome_of(run: Run, served: int) -> Outcome:
    """The outcome of the turn just ended, the server having run ``served`` calls for it."""
    if run.cancel_requested.is_set():
        stopping = run.stopping
        if stopping == "shut_down":
            return Outcome.SHUT_DOWN
        if stopping == "interrupted":
            return Outcome.INTERRUPTED
        if stopping == "steered":
            return Outcome.STEERED_AT_CLIENT if run.builder.needs_client else Outcome.STEERED
        return Outcome.CANCELLED
    if run.builder.needs_client:
        return Outcome.NEEDS_CLIENT
    if not served and not run.builder.answered_in_turn:  # the client's answers are read next, as results
        return Outcome.FINAL
    cap = run.ctx.request.max_output_tokens  # the response's budget, not each turn's (as OpenAI counts it)
    return Outcome.SPENT if cap is not None and run.builder.output_tokens >= cap else Outcome.AGAIN
