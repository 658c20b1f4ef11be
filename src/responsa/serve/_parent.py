"""A child process of the server that must not outlive it."""

from __future__ import annotations

import ctypes
import signal

__all__ = ["end_with_the_parent"]

_PR_SET_PDEATHSIG = 1


def end_with_the_parent() -> None:
    """Ask Linux to terminate this process when its parent dies, even killed outright (prctl's
    PR_SET_PDEATHSIG): a worker or the model process must not serve on, unsupervised, after the
    server that started it is gone."""
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(_PR_SET_PDEATHSIG, signal.SIGTERM)
    except (OSError, AttributeError):  # not Linux: the parent's own stop is all there is
        return
