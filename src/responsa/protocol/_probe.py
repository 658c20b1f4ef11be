"""Probing a library the way the server will use it, in a child interpreter: an import that fails
(a missing or broken package) is found at start, with its real error, and what a probe imports does
not stay in the server's memory. A probe's answer is kept for the process: installed packages do
not change under it."""

from __future__ import annotations

import subprocess
import sys
from functools import cache

__all__ = ["failure_of", "probe_in_child"]

_RUNNER = """
import sys
try:
    exec(compile(sys.argv[1], "<probe>", "exec"), {})
except BaseException as failure:
    print(type(failure).__name__ + ": " + " ".join(str(failure).split()), file=sys.stderr)
    sys.exit(1)
"""
"""Runs the probe's code; an error ends it with one line: the exception's type and message."""


@cache
def probe_in_child(code: str, timeout: float = 60.0) -> str | None:
    """None when ``code`` runs to the end in this installation's Python; otherwise its error (the
    exception's last line: type and message)."""
    try:
        done = subprocess.run([sys.executable, "-c", _RUNNER, code], capture_output=True, text=True, timeout=timeout)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return failure_of(exc)
    if done.returncode == 0:
        return None
    lines = [line for line in done.stderr.splitlines() if line.strip()]
    return lines[-1].strip() if lines else f"exited with status {done.returncode}"


def failure_of(exc: BaseException) -> str:
    """An exception as a log line says it: its type and message; for a group (a task group's
    failures), its first leaf's, not "unhandled errors in a TaskGroup"."""
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    return f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__
