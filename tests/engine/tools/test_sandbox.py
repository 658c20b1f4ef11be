"""The code interpreter's sandbox, attacked: the real bubblewrap sandbox runs each attempt (network,
host files, the host's processes and environment, time, memory, processes, output, file size), and
the host (this test process, and a server it would be) must come out untouched.

Skipped where no sandbox can run (the feature is then off), unless RESPONSA_REQUIRE_SANDBOX is set
(CI sets it: install.sh installs bubblewrap)."""

from __future__ import annotations

import os
import socket
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import replace
from pathlib import Path

import anyio
import pytest

from responsa.external import Execution, PythonSandbox, SandboxLimits, probe_sandbox, sweep_cgroups

WHY_NOT = probe_sandbox()
if WHY_NOT is not None and os.environ.get("RESPONSA_REQUIRE_SANDBOX"):
    pytest.fail(f"RESPONSA_REQUIRE_SANDBOX is set but no sandbox can run: {WHY_NOT}", pytrace=False)
pytestmark = [pytest.mark.anyio, pytest.mark.skipif(WHY_NOT is not None, reason=f"no sandbox here: {WHY_NOT}")]
LIMITS = SandboxLimits(call_seconds=8, memory_bytes=256 * 1024 * 1024, processes=32, file_bytes=1024 * 1024)


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@asynccontextmanager
async def sandbox(directory: Path, limits: SandboxLimits = LIMITS) -> AsyncIterator[PythonSandbox]:
    box = PythonSandbox(directory, limits)
    try:
        yield box
    finally:
        await box.close()


@pytest.fixture
async def box(tmp_path: Path) -> AsyncIterator[PythonSandbox]:
    async with sandbox(tmp_path / "container") as box:
        yield box


async def run(box: PythonSandbox, code: str) -> Execution:
    return await box.run(code)


async def test_state_lives_as_long_as_the_container(box: PythonSandbox) -> None:
    assert (await run(box, "total = 20\ntotal + 22")).logs == "42\n"
    assert (await run(box, "print(total * 2)")).logs == "40\n"
    failed = await run(box, "def half(n):\n    return n / 0\nhalf(total)")
    assert failed.error is not None and "ZeroDivisionError" in failed.error
    assert 'File "<cell>", line 2, in half' in failed.error and "driver" not in failed.error  # the cell's frames only
    typo = await run(box, "total +")
    assert typo.error is not None and typo.error.startswith('  File "<cell>", line 1') and "driver" not in typo.error
    assert (await run(box, "total")).logs == "20\n"  # an error does not lose the state


async def test_files_written_to_mnt_data_are_the_containers(box: PythonSandbox) -> None:
    await run(box, "open('/mnt/data/report.csv', 'w').write('a,b\\n1,2\\n')")
    assert (box.directory / "report.csv").read_text() == "a,b\n1,2\n"


async def test_no_network_not_even_the_hosts_loopback(box: PythonSandbox) -> None:
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen()
    port = listener.getsockname()[1]
    try:
        code = f"""
import socket
for host, port in [("127.0.0.1", {port}), ("1.1.1.1", 80), ("169.254.169.254", 80)]:
    try:
        socket.create_connection((host, port), timeout=2)
        print("reached", host)
    except OSError as error:
        print("refused", host, type(error).__name__)
try:
    socket.getaddrinfo("example.com", 80)
    print("resolved")
except OSError:
    print("no dns")
"""
        logs = (await run(box, code)).logs
    finally:
        listener.close()
    assert "reached" not in logs and "resolved" not in logs and logs.count("refused") == 3, logs


async def test_the_hosts_files_are_invisible_and_the_runtime_read_only(box: PythonSandbox) -> None:
    here = Path(__file__).resolve()
    code = f"""
import os
for path in ["/etc/passwd", "/etc/shadow", {str(here)!r}, {str(Path.home() / ".bash_history")!r}, "/root/.ssh"]:
    print(path, os.path.exists(path))
for path in ["/usr/evil", "/tmp/../usr/evil"]:
    try:
        open(path, "w")
        print("wrote", path)
    except OSError as error:
        print("refused", path)
"""
    logs = (await run(box, code)).logs
    assert " True" not in logs and "wrote" not in logs, logs
    assert logs.count("refused") == 2


async def test_the_hosts_processes_and_environment_are_invisible(
    box: PythonSandbox, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-server-secret")
    box2 = PythonSandbox(box.directory, box.limits)  # started now, with the secret in this process's environment
    try:
        code = f"""
import os
pids = [name for name in os.listdir("/proc") if name.isdigit()]
print("processes", len(pids))
print("secret" if any("sk-server-secret" in value for value in os.environ.values()) else "clean")
try:
    os.kill({os.getpid()}, 0)
    print("host pid reachable")
except ProcessLookupError:
    print("host pid unknown")
for pid in pids:
    if open(f"/proc/{{pid}}/cmdline", "rb").read() == {Path(f"/proc/{os.getpid()}/cmdline").read_bytes()!r}:
        print("sees the host process")
"""
        logs = (await box2.run(code)).logs
    finally:
        await box2.close()
    assert "clean" in logs and "sees the host process" not in logs and "host pid reachable" not in logs, logs
    assert int(logs.split("processes ")[1].split()[0]) <= 5


async def test_a_cell_past_its_deadline_is_stopped_and_the_container_starts_over(tmp_path: Path) -> None:
    async with sandbox(tmp_path / "container", replace(LIMITS, call_seconds=3)) as box:  # the deadline is waited out
        await run(box, "kept = 1")
        stopped = await run(box, "import time\nwhile True: time.sleep(0.1)")
        assert stopped.error is not None and "limit" in stopped.error
        after = await run(box, "'kept' in globals()")
        assert after.logs == "False\n"  # a fresh Python


async def test_memory_is_capped(box: PythonSandbox) -> None:
    result = await run(box, "block = bytearray(2 * 1024 * 1024 * 1024)\nlen(block)")
    assert result.error is not None and ("MemoryError" in result.error or "reset" in result.error)
    assert (await run(box, "6 * 7")).logs == "42\n"  # the container (restarted if it had to be) still works


async def test_a_fork_bomb_ends_with_an_error_and_the_host_is_fine(box: PythonSandbox) -> None:
    code = """
import os
children = 0
try:
    for _ in range(10000):
        pid = os.fork()
        if pid == 0:
            import time
            time.sleep(30)
            os._exit(0)
        children += 1
except OSError as error:
    print("stopped after", children, type(error).__name__)
"""
    result = await run(box, code)
    assert "stopped after" in result.logs or result.error is not None
    if "stopped after" in result.logs:
        assert int(result.logs.split("stopped after ")[1].split()[0]) < 10000
    os.kill(os.getpid(), 0)  # this process (a server, in production) is untouched
    other = PythonSandbox(box.directory.parent / "other", LIMITS)
    try:
        assert (await other.run("1 + 1")).logs == "2\n"
    finally:
        await other.close()


async def test_output_and_files_are_capped(box: PythonSandbox) -> None:
    printed = await run(box, "print('x' * 1_000_000)")
    assert len(printed.logs) < 70_000 and "truncated" in printed.logs
    big = await run(box, "open('/mnt/data/big.bin', 'wb').write(b'0' * (4 * 1024 * 1024))")
    assert big.error is not None and ("EFBIG" in big.error or "File too large" in big.error)
    assert (box.directory / "big.bin").stat().st_size <= 1024 * 1024


async def test_writing_to_the_real_stdout_does_not_break_the_protocol(box: PythonSandbox) -> None:
    result = await run(box, "import os\nos.write(1, b'raw output\\n')\nprint('then this')")
    assert "raw output" in result.logs and "then this" in result.logs
    assert (await run(box, "2 + 2")).logs == "4\n"


@pytest.mark.skipif(not os.access("/sys/fs/cgroup/pids", os.W_OK), reason="the server cannot make cgroups here")
async def test_cgroups_a_killed_server_left_behind_are_swept(box: PythonSandbox) -> None:
    """An empty leftover cgroup goes at start; one a running sandbox is in stays."""
    leftover = Path("/sys/fs/cgroup/pids/responsa-leftover0")
    leftover.mkdir(exist_ok=True)
    assert (await run(box, "6 * 7")).logs == "42\n"  # the box's own cgroups now hold its Python
    sweep_cgroups(older_than=0)
    assert not leftover.exists()
    live = [path for path in Path("/sys/fs/cgroup/pids").glob("responsa-*")]
    assert live and all((path / "cgroup.procs").read_text().strip() for path in live)
    assert (await run(box, "6 * 7")).logs == "42\n"


async def test_a_cell_its_caller_gave_up_on_does_not_answer_the_next(box: PythonSandbox) -> None:
    """A cancelled response stops waiting mid-cell: the next cell gets its own answer, not that one's."""
    assert (await run(box, "kept = 1")).error is None
    with anyio.move_on_after(0.5):
        await run(box, "import time\ntime.sleep(3)\nprint('late')")
    after = await run(box, "print('mine')")
    assert after.logs == "mine\n"
