"""A responsa server under valgrind's callgrind, for the benchmarks that count its instructions
(bench/instructions_ab.py, bench/websocket_instructions.py, bench/long_session_instructions.py): its
command, the counters zeroed and dumped by ``callgrind_control``, and a dump's total."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from _server import free_port, running


@dataclass(frozen=True)
class CountedServer:
    """A server under callgrind: its URL, its pid, and ``counts``, callgrind's output file (each dump is
    ``counts.N``, or ``counts.N-TT`` per thread with ``--separate-threads=yes``)."""

    url: str
    pid: int
    counts: Path

    def zero(self) -> None:
        """Counters back to zero: what the next dump holds starts now."""
        subprocess.run(["callgrind_control", "--zero", str(self.pid)], check=True, capture_output=True)

    def dump(self, label: str | None = None) -> None:
        """What was counted since the last zero (or dump), into the next ``counts.N``."""
        named = ["--dump", label] if label is not None else ["--dump"]
        subprocess.run(["callgrind_control", *named, str(self.pid)], check=True, capture_output=True)


def instructions(dump: Path) -> int:
    """The instructions a callgrind dump counted."""
    return next(int(line.split()[1]) for line in dump.read_text().splitlines() if line.startswith("summary:"))


@contextmanager
def counted_server(
    upstream: str,
    scratch: Path,
    valgrind: Sequence[str] = (),
    serve: Sequence[str] = (),
    python: str = sys.executable,
    env: dict[str, str] | None = None,
) -> Iterator[CountedServer]:
    """responsa (``python``'s, with ``env``) under callgrind in front of ``upstream``, on a SQLite file in
    ``scratch``; ``valgrind`` and ``serve``: more flags for each. Valgrind's log and the counts go to
    ``scratch`` too. A server starts in about a minute under it."""
    port = free_port()
    counts = scratch / f"callgrind-{port}.out"
    command = ["valgrind", "--tool=callgrind", f"--callgrind-out-file={counts}", "--cache-sim=no",
               f"--log-file={scratch / f'valgrind-{port}.log'}", *valgrind,
               python, "-m", "responsa.cli", "serve", "--port", str(port), "--log-level", "warning",
               "--db", f"sqlite:///{scratch / f'{port}.db'}", "--no-embedded", "--no-simulator",
               "--upstream", upstream, *serve]  # fmt: skip
    url = f"http://127.0.0.1:{port}"
    with running(command, f"{url}/health", env=env, wait=600) as process:
        yield CountedServer(url, process.pid, counts)
