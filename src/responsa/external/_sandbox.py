"""Running code the model writes: one long-lived Python per container, inside bubblewrap.

The sandbox has no network (its own empty network namespace), sees none of the host's files but a
read-only runtime (``/usr`` and the Python installation) and its container's directory at
``/mnt/data`` (the only place it can write, besides a private ``/tmp``), its own PID namespace and
``/proc`` (the host's processes are invisible), an empty environment (no server secrets), and a new
session (no terminal injection). Limits: a deadline per call from the parent (the whole sandbox is
killed past it, and restarted, empty, for the next call), virtual memory and file sizes by
``prlimit``, and, where the host lets the server make cgroups (root with cgroup v1 or a delegated
v2), the number of processes and the memory of the whole container. Without bubblewrap, the feature
is off (:func:`probe_sandbox` says why): code never runs unsandboxed.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio
from anyio.abc import Process

from responsa.protocol import probe_in_child

from ._egress import EgressProxy

__all__ = [
    "CommandRun",
    "Execution",
    "PythonSandbox",
    "SandboxLimits",
    "cgroups_writable",
    "probe_sandbox",
    "probe_sandbox_libraries",
    "sweep_cgroups",
]

DRIVER = Path(__file__).with_name("_sandbox_driver.py")
_INSIDE_DRIVER = "/opt/responsa/driver.py"
_CGROUPS = Path("/sys/fs/cgroup")
_CGROUP_PREFIX = "responsa-"


@dataclass(frozen=True)
class SandboxLimits:
    memory_bytes: int = 1024 * 1024 * 1024
    """Of the whole container where cgroups can be made; of each process's address space always (x4)."""
    call_seconds: float = 30.0
    processes: int = 64
    output_characters: int = 65536
    file_bytes: int = 100 * 1024 * 1024


@dataclass(frozen=True)
class CommandRun:
    """How a shell command ended: its output, and its exit code (None: it ran past its time)."""

    stdout: str
    stderr: str
    exit_code: int | None


@dataclass(frozen=True)
class Execution:
    logs: str
    error: str | None = None
    images: list[str] = field(default_factory=list)
    """PNG images (base64) the cell's matplotlib figures drew."""


def _runtime_binds() -> list[str]:
    """Read-only binds for the Python the sandbox runs: the installation and, for a venv, the venv."""
    binds = ["--ro-bind", "/usr", "/usr", "--symlink", "usr/lib", "/lib", "--symlink", "usr/lib64", "/lib64",
             "--symlink", "usr/bin", "/bin"]  # fmt: skip
    for prefix in {sys.base_prefix, sys.prefix}:
        if not prefix.startswith("/usr"):
            binds += ["--ro-bind", prefix, prefix]
    return binds


_INSIDE_EGRESS = "/run/responsa-egress.sock"
_PROXY_PORT = 3128
"""Where the driver listens, inside the sandbox, for what it relays to the proxy (``HTTP(S)_PROXY``)."""


def _sandbox(directory: Path, skills: Path | None = None, egress: Path | None = None) -> list[str]:
    """bubblewrap's arguments: fresh /proc, /dev and /tmp first (the runtime may live under /tmp: its
    binds go on top), then the read-only runtime and driver, then the container at /mnt/data."""
    environment = {"HOME": "/mnt/data", "PATH": "/usr/bin:/bin", "MPLBACKEND": "Agg", "MPLCONFIGDIR": "/tmp",
                   "OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1",
                   "PYTHONDONTWRITEBYTECODE": "1", "LANG": "C.UTF-8"}  # fmt: skip
    arguments = [shutil.which("bwrap") or "bwrap", "--unshare-all", "--new-session", "--die-with-parent",
                 "--clearenv", "--hostname", "sandbox", "--proc", "/proc", "--dev", "/dev", "--tmpfs", "/tmp",
                 *_runtime_binds(), "--ro-bind", str(DRIVER), _INSIDE_DRIVER,
                 "--bind", str(directory), "/mnt/data", "--chdir", "/mnt/data"]  # fmt: skip
    if skills is not None:  # the container's skills, read-only (what is added later shows through the bind)
        arguments += ["--ro-bind", str(skills), "/mnt/skills"]
    if egress is not None:  # an allowlist: the server's proxy is the one way out (see _egress)
        arguments += ["--bind", str(egress), _INSIDE_EGRESS]
        proxy = f"http://127.0.0.1:{_PROXY_PORT}"
        environment |= {name: proxy for name in ("HTTP_PROXY", "HTTPS_PROXY", "http_proxy", "https_proxy")}
    for name, value in environment.items():
        arguments += ["--setenv", name, value]
    return arguments


def _command(
    directory: Path, limits: SandboxLimits, skills: Path | None = None, egress: Path | None = None
) -> list[str]:
    limited = ["prlimit", f"--as={limits.memory_bytes * 4}", f"--fsize={limits.file_bytes}", "--nofile=256",
               "--core=0", "--"]  # fmt: skip
    driver = [sys.executable, "-I", "-u", _INSIDE_DRIVER, str(limits.output_characters),
              *([_INSIDE_EGRESS, str(_PROXY_PORT)] if egress is not None else [])]  # fmt: skip
    return [*limited, *_sandbox(directory, skills, egress), *driver]


def probe_sandbox() -> str | None:
    """None when sandboxes can run here; otherwise why not (no bubblewrap, no user namespaces...). It
    starts a sandbox as the code interpreter does, and runs the driver's Python in it."""
    if shutil.which("bwrap") is None:
        return "bubblewrap (bwrap) is not installed"
    if shutil.which("prlimit") is None:
        return "prlimit (util-linux) is not installed"
    with tempfile.TemporaryDirectory() as directory:
        check = [*_sandbox(Path(directory)), sys.executable, "-I", "-c", "import os; print(6 * 7, os.path.isfile("
                 f"{_INSIDE_DRIVER!r}))"]  # fmt: skip
        try:
            done = subprocess.run(check, capture_output=True, text=True, timeout=30, env={})
        except (OSError, subprocess.TimeoutExpired) as exc:
            return f"bubblewrap could not start: {exc}"
    if done.returncode != 0 or done.stdout.strip() != "42 True":
        return f"bubblewrap could not make a sandbox: {(done.stderr or done.stdout).strip()[:300]}"
    return None


_LIBRARIES_PROBE = """
import io, numpy, pandas, matplotlib
matplotlib.use("Agg")
from matplotlib import pyplot
figure = pyplot.figure()
figure.savefig(io.BytesIO(), format="png")
"""


def probe_sandbox_libraries() -> str | None:
    """None when the libraries the code interpreter offers (numpy, pandas, matplotlib drawing a PNG)
    work in this installation's Python, which the sandbox runs; otherwise the first one's error."""
    return probe_in_child(_LIBRARIES_PROBE)


def cgroups_writable() -> bool:
    """Whether the container-wide caps (processes, memory) can be made here: cgroup v1's ``pids`` and
    ``memory`` writable by the server (root, or delegated). Without them each process is still capped
    (address space, file size, open files), but not the number of processes."""
    return all(os.access(_CGROUPS / controller, os.W_OK) for controller in ("pids", "memory"))


def sweep_cgroups(older_than: float = 60.0) -> int:
    """Remove the sandboxes' cgroups a killed server left behind: empty ones (a cgroup with a process in
    it cannot be removed) made more than ``older_than`` seconds ago (not one a sandbox is joining)."""
    removed = 0
    for controller in ("pids", "memory"):
        for path in (_CGROUPS / controller).glob(f"{_CGROUP_PREFIX}*"):
            try:
                if time.time() - path.stat().st_mtime >= older_than:
                    path.rmdir()
                    removed += 1
            except OSError:
                continue
    return removed


class _Cgroup:
    """The container's processes and memory, capped where the host lets the server make cgroups."""

    def __init__(self, limits: SandboxLimits) -> None:
        self.paths: list[Path] = []
        name = f"{_CGROUP_PREFIX}{uuid.uuid4().hex[:12]}"
        for controller, setting, value in (("pids", "pids.max", limits.processes),
                                           ("memory", "memory.limit_in_bytes", limits.memory_bytes)):  # fmt: skip
            path = _CGROUPS / controller / name
            try:
                path.mkdir()
                (path / setting).write_text(str(value))
            except OSError:
                continue
            self.paths.append(path)

    def wrap(self, command: list[str]) -> list[str]:
        """``command`` started inside the cgroups (the shell joins them, then becomes the command)."""
        if not self.paths:
            return command
        joins = " && ".join(f"echo $$ > {path / 'cgroup.procs'}" for path in self.paths)
        return ["/bin/sh", "-c", f'{joins} && exec "$@"', "sandbox", *command]

    def kill(self) -> None:
        for path in self.paths:
            try:
                for pid in (path / "cgroup.procs").read_text().split():
                    os.kill(int(pid), 9)
            except (OSError, ValueError):
                pass

    def remove(self) -> None:
        self.kill()
        for path in self.paths:
            try:
                path.rmdir()
            except OSError:
                pass


class PythonSandbox:
    """One container's Python: a variable a cell sets is there in the next; past a call's deadline the
    sandbox is killed and the next call starts a fresh one."""

    def __init__(
        self,
        directory: Path,
        limits: SandboxLimits | None = None,
        skills: Path | None = None,
        egress: EgressProxy | None = None,
    ) -> None:
        """``skills``: a directory seen read-only at /mnt/skills (the container's skills); ``egress``: the
        proxy that is its one way out (an allowlist; without one it has no network at all)."""
        self.directory = directory
        self.limits = limits or SandboxLimits()
        self.skills = skills
        self.egress = egress
        self._process: Process | None = None
        self._cgroup: _Cgroup | None = None
        self._lock = anyio.Lock()

    async def _start(self) -> Process:
        self.directory.mkdir(parents=True, exist_ok=True)
        self._cgroup = _Cgroup(self.limits)
        if self.skills is not None:
            self.skills.mkdir(parents=True, exist_ok=True)
        if self.egress is not None:
            await self.egress.start()
        egress = self.egress.path if self.egress is not None else None
        command = self._cgroup.wrap(_command(self.directory, self.limits, self.skills, egress))
        self._process = await anyio.open_process(command, env={"PATH": "/usr/bin:/bin"}, start_new_session=True)
        return self._process

    async def run(self, code: str) -> Execution:
        """Run one cell; a cell that outlives the deadline, or kills its Python, is an error."""
        answer, stray, why = await self._ask({"code": code}, self.limits.call_seconds)
        if answer is None:
            return Execution(stray, f"{why}; the container's Python state was reset.")
        return Execution(stray + str(answer.get("logs") or ""), answer.get("error"), list(answer.get("images") or []))

    async def command(self, command: str, seconds: float, limit: int) -> CommandRun:
        """Run one shell command in /mnt/data, past ``seconds`` killed (a ``timeout``), each of its
        outputs cut to ``limit`` characters. The sandbox's deadline is the server's (``call_seconds``):
        a command is given no more."""
        seconds = min(seconds, self.limits.call_seconds)
        answer, stray, why = await self._ask({"command": command, "seconds": seconds, "limit": limit}, seconds + 5)
        if answer is None:
            return CommandRun(stray, f"{why}; the container's Python state was reset.", None)
        outcome = answer.get("outcome") or {}
        exit_code = outcome.get("exit_code") if outcome.get("type") == "exit" else None
        return CommandRun(str(answer.get("stdout") or ""), str(answer.get("stderr") or ""), exit_code)

    async def _ask(self, request: dict[str, Any], seconds: float) -> tuple[dict[str, Any] | None, str, str]:
        """The driver's answer to ``request`` (None where it gave none), what else it printed, and why
        there is no answer (past ``seconds``: the sandbox is stopped; the next request starts another)."""
        async with self._lock:
            process = self._process or await self._start()
            assert process.stdin is not None and process.stdout is not None
            stray: list[str] = []
            with anyio.move_on_after(seconds) as deadline:
                try:
                    await process.stdin.send((json.dumps(request) + "\n").encode())
                    answer = await self._answer(process, stray)
                except (anyio.BrokenResourceError, anyio.ClosedResourceError, anyio.EndOfStream):
                    answer = None
                except anyio.get_cancelled_exc_class():  # the caller gave up (a cancelled response)
                    if not deadline.cancel_called:
                        await self.close()  # its answer would be read as the next request's: start over
                    raise
            if deadline.cancelled_caught or answer is None:
                await self.close()
                why = (f"The code ran past its {seconds:g} s limit" if deadline.cancelled_caught
                       else "The code's Python ended (memory, or exit)")  # fmt: skip
                return None, "".join(stray), why
            return answer, "".join(stray), ""

    async def _answer(self, process: Process, stray: list[str]) -> dict[str, Any] | None:
        """The driver's answer line; whatever else the code wrote to the real stdout is kept as output."""
        assert process.stdout is not None
        buffer = b""
        while True:
            while b"\n" not in buffer:
                chunk = await process.stdout.receive()
                buffer += chunk
                if len(buffer) > 64 * 1024 * 1024:
                    return None
            line, buffer = buffer.split(b"\n", 1)
            try:
                answer = json.loads(line)
            except ValueError:
                answer = None
            if isinstance(answer, dict) and "logs" in answer:
                return answer
            stray.append(line.decode("utf-8", errors="replace")[: self.limits.output_characters] + "\n")

    async def close(self) -> None:
        """Stop the sandbox (its files stay in the directory)."""
        process, self._process = self._process, None
        if self.egress is not None:
            await self.egress.close()
        if self._cgroup is not None:
            self._cgroup.remove()
            self._cgroup = None
        if process is not None:
            with anyio.CancelScope(shield=True):
                try:
                    os.killpg(process.pid, 9)
                except OSError:
                    pass
                await process.aclose()
