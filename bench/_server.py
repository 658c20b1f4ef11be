"""Start a responsa server (and the shared rig's mock upstream) on loopback for a benchmark."""

from __future__ import annotations

import argparse
import json
import os
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import Any

import httpx


def free_port() -> int:
    """A free TCP port on loopback."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@contextmanager
def responsa_server(
    *args: str,
    env: dict[str, str] | None = None,
    pin: int | None = None,
    pids: list[int] | None = None,
    python: str = sys.executable,
) -> Iterator[str]:
    """``with responsa_server("--db", url) as base_url:`` yields ``http://127.0.0.1:PORT``; ``python``
    runs it (another interpreter needs responsa's dependencies installed)."""
    port = free_port()
    command = [*_pinned(pin), python, "-m", "responsa.cli", "serve", "--port", str(port), "--log-level", "warning",
               *args]  # fmt: skip
    url = f"http://127.0.0.1:{port}"
    with running(command, f"{url}/health", env={**os.environ, **(env or {})}) as process:
        if "--workers" in args:
            every_worker_answers(url, int(args[args.index("--workers") + 1]))
        if pids is not None:
            pids.append(process.pid)
        yield url


@contextmanager
def simulator_server(profiles: str, directory: Path) -> Iterator[str]:
    """A server of the simulator alone with ``profiles`` (the TOML ``--sim-profiles`` reads), its store
    a SQLite file in ``directory``; yields its base URL."""
    path = directory / "profiles.toml"
    path.write_text(profiles)
    db = f"sqlite:///{directory / 'r.db'}"
    with responsa_server("--db", db, "--no-embedded", "--sim-profiles", str(path)) as url:
        yield url


def every_worker_answers(url: str, workers: int, wait: float = 60) -> None:
    """Return once ``workers`` distinct workers have answered ``/health``, each on a new connection:
    a load that opens its keep-alive connections while a worker is still starting would leave that
    worker without any for the whole run."""
    seen: set[str] = set()
    deadline = time.monotonic() + wait
    while len(seen) < workers:
        if time.monotonic() > deadline:
            raise RuntimeError(f"only {len(seen)} of {workers} workers answered in {wait:.0f} s")
        seen.add(httpx.get(f"{url}/health").headers.get("x-responsa-worker", ""))


@contextmanager
def running(
    command: list[str], probe: str, env: dict[str, str] | None = None, wait: float = 30
) -> Iterator[subprocess.Popen[bytes]]:
    """``command`` started, once ``probe`` answers 200 (``wait`` seconds at most); terminated on exit."""
    process = subprocess.Popen(command, env=env, stdout=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + wait
        while True:
            try:
                httpx.get(probe).raise_for_status()
                break
            except httpx.TransportError:
                if process.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError(f"did not start: {' '.join(command)}") from None
                time.sleep(0.05)
        yield process
    finally:
        process.terminate()
        process.wait(15)


RIG = Path(__file__).resolve().parents[2] / "shared" / "bench"
"""The shared load rig (../shared/bench): mock_upstream.py and load.py."""


@contextmanager
def rig_mock(
    python: str, *args: str, rig: Path = RIG, pin: int | None = 0, pids: list[int] | None = None
) -> Iterator[str]:
    """The rig's mock Chat Completions upstream on a free port, pinned to core ``pin`` (None: any);
    yields its ``/v1`` URL (and appends its pid to ``pids``)."""
    port = free_port()
    command = [*_pinned(pin), python, str(rig / "mock_upstream.py"), "--port", str(port), *args]
    url = f"http://127.0.0.1:{port}/v1"
    with running(command, f"{url}/models") as process:
        if pids is not None:
            pids.append(process.pid)
        yield url


@contextmanager
def responsa_on_rig(
    python: str, *mock_args: str, rig: Path = RIG, pids: list[int] | None = None
) -> Iterator[tuple[str, str]]:
    """responsa (a fresh SQLite store, pinned to core 1) in front of the rig's mock (core 0, started
    with ``mock_args``); yields responsa's URL and the mock's ``/v1`` URL."""
    with tempfile.TemporaryDirectory() as tmp, rig_mock(python, *mock_args, rig=rig) as upstream:
        db = f"sqlite:///{Path(tmp) / 'rig.db'}"
        flags = ("--db", db, "--no-embedded", "--no-simulator", "--upstream", upstream)
        with responsa_server(*flags, pin=1, pids=pids) as url:
            yield url, upstream


@contextmanager
def responsa_trees(
    upstream: str, sources: dict[str, Path], pythons: dict[str, str] | None = None
) -> Iterator[dict[str, tuple[str, int]]]:
    """One responsa per source tree (``src`` of a checkout, by name), each on its own fresh SQLite file,
    all pinned to core 1 in front of ``upstream``, up at once; yields each one's URL and pid by name.
    ``pythons``: the interpreter of each (by name; this one where none is given)."""
    with tempfile.TemporaryDirectory() as tmp, ExitStack() as stack:
        servers: dict[str, tuple[str, int]] = {}
        for name, source in sources.items():
            pids: list[int] = []
            env = {"PYTHONPATH": str(source.resolve())}
            flags = (
                "--db",
                f"sqlite:///{Path(tmp) / name}.db",
                "--no-embedded",
                "--no-simulator",
                "--upstream",
                upstream,
            )
            python = (pythons or {}).get(name, sys.executable)
            url = stack.enter_context(responsa_server(*flags, env=env, pin=1, pids=pids, python=python))
            servers[name] = (url, pids[0])
        yield servers


@contextmanager
def lean_gateway(upstream: str, pin: int = 1) -> Iterator[tuple[str, int]]:
    """bench/lean_gateway.py (the least a Python gateway that stores its responses is) in front of
    ``upstream``, on a fresh SQLite file, pinned to core ``pin`` as responsa is; yields its URL and pid."""
    port = free_port()
    script = str(Path(__file__).with_name("lean_gateway.py"))
    with tempfile.TemporaryDirectory() as tmp:
        command = ["taskset", "-c", str(pin), sys.executable, script, "--serve", str(port), upstream, f"{tmp}/lean.db"]
        url = f"http://127.0.0.1:{port}"
        with running(command, f"{url}/health") as process:
            yield url, process.pid


def rig_arguments(parser: argparse.ArgumentParser) -> None:
    """The options every script on the shared rig takes: where it is, and the Python that runs it."""
    parser.add_argument("--rig", type=Path, default=RIG)
    parser.add_argument("--rig-python", default=sys.executable, help="a Python with aiohttp, uvloop, httptools, orjson")


def ab_arguments(parser: argparse.ArgumentParser) -> None:
    """The options of a before/after on the rig: the rig's, and the two source trees compared."""
    rig_arguments(parser)
    parser.add_argument("--before", type=Path, required=True, help="the source tree (src) of the first version")
    parser.add_argument("--after", type=Path, required=True, help="the source tree (src) of the second version")
    parser.add_argument(
        "--before-python", default=sys.executable, help="the Python that runs the first (default: this one)"
    )
    parser.add_argument(
        "--after-python", default=sys.executable, help="the Python that runs the second (default: this one)"
    )


def ab_pythons(args: argparse.Namespace) -> dict[str, str]:
    """The interpreter of each side of a before/after, by name: two builds of Python compare as two trees do."""
    return {"before": args.before_python, "after": args.after_python}


def rig_load(python: str, url: str, *flags: str, rig: Path = RIG, pin: int | None = 0) -> dict[str, Any]:
    """One run of the rig's load.py (pinned to core ``pin``, None: any) against ``url``: its JSON summary."""
    return rig_loads(python, [url], *flags, rig=rig, pin=pin)[0]


def rig_loads(
    python: str, urls: list[str], *flags: str, rig: Path = RIG, first: tuple[str, ...] = (), pin: int | None = None
) -> list[dict[str, Any]]:
    """The rig's load.py once per URL, all at once, on core ``pin`` (None: any) (``first``: flags for the
    first only, such as ``--pid``); each one's JSON summary. One load.py drives one core: a server with
    many cores needs several."""
    commands = [[*_pinned(pin), python, str(rig / "load.py"), "--url", url, *flags, *(first if index == 0 else ())]
                for index, url in enumerate(urls)]  # fmt: skip
    running = [subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
               for command in commands]  # fmt: skip
    outputs = [process.communicate()[0] for process in running]
    for command, process in zip(commands, running, strict=True):
        if process.returncode:
            raise subprocess.CalledProcessError(process.returncode, command)
    return [json.loads(next(line for line in output.splitlines() if line.startswith("{"))) for output in outputs]


def mock_alone_rps(python: str, upstream: str, mode: str, concurrency: int, seconds: float, rig: Path = RIG) -> float:
    """The rig's mock driven straight by load.py (``mode`` json or stream): the yardstick's req/s."""
    flags = ["--api", "chat", "-c", str(concurrency), "-d", str(seconds), *(["--stream"] * (mode == "stream"))]
    return float(rig_load(python, upstream.removesuffix("/v1"), *flags, rig=rig)["rps"])


def process_tree(pid: int) -> list[int]:
    """``pid`` and every process under it."""
    tree = [pid]
    for task in Path(f"/proc/{pid}/task").iterdir():
        for child in (task / "children").read_text().split():
            tree += process_tree(int(child))
    return tree


def cpu_seconds(pid: int) -> float:
    """CPU time a process has used (user and system), from /proc; 0 once it is gone."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except FileNotFoundError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def cpu_seconds_precise(pid: int) -> float:
    """CPU time a process's threads now running have used, to the nanosecond (``cpu_seconds`` counts
    in clock ticks, 10 ms here: too coarse for a turn's 2 ms); 0 once it is gone."""
    total = 0
    for task in Path(f"/proc/{pid}/task").glob("*/schedstat"):
        try:
            total += int(task.read_text().split()[0])
        except (FileNotFoundError, ProcessLookupError):
            continue  # a thread that ended meanwhile
    return total / 1e9


def time_wait_to(url: str) -> int:
    """Sockets in TIME_WAIT towards ``url``'s port: each is a connection opened and closed, not reused."""
    port = int(url.split(":")[2].split("/")[0])
    count = 0
    for line in Path("/proc/net/tcp").read_text().splitlines()[1:]:
        fields = line.split()
        remote_port = int(fields[2].split(":")[1], 16)
        count += fields[3] == "06" and remote_port == port
    return count


def _pinned(core: int | None) -> list[str]:
    """The prefix that runs a command on ``core`` alone (None: on any)."""
    return [] if core is None else ["taskset", "-c", str(core)]
