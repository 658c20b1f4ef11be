"""Runs inside the sandbox (never imported by the server): executes one request per line of JSON on
stdin and answers each with one line of JSON. A code cell (``code``) runs in one namespace kept
between cells (as a notebook does): its output (stdout and stderr, the value of a last expression),
its error, and the images matplotlib figures drew (PNG, base64). A shell command (``command``) runs
in ``/bin/sh`` in /mnt/data, in its own process group, killed whole at its deadline or its end: what
it wrote to stdout and stderr (each cut to ``limit`` characters) and how it ended."""

from __future__ import annotations

import ast
import base64
import contextlib
import io
import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import traceback
from typing import Any

LIMIT = int(sys.argv[1]) if len(sys.argv) > 1 else 65536
EGRESS = sys.argv[2] if len(sys.argv) > 2 else None
"""The server's proxy for this container (a Unix socket), where its network policy allows some hosts;
relayed from loopback's port ``sys.argv[3]``."""
namespace: dict[str, Any] = {"__name__": "__main__"}
channel = sys.stdout


def figures() -> list[str]:
    """Every open matplotlib figure as PNG (closed once saved); none when matplotlib is not in use."""
    pyplot = sys.modules.get("matplotlib.pyplot")
    if pyplot is None:
        return []
    images = []
    for number in pyplot.get_fignums():
        buffer = io.BytesIO()
        pyplot.figure(number).savefig(buffer, format="png")
        images.append(base64.b64encode(buffer.getvalue()).decode())
    pyplot.close("all")
    return images


def cell_traceback(exc: BaseException) -> str:
    """The error as a notebook shows it: from the cell's own frames on (not this driver's)."""
    frames = exc.__traceback__
    while frames is not None and frames.tb_frame.f_code.co_filename != "<cell>":
        frames = frames.tb_next
    return "".join(traceback.format_exception(type(exc), exc, frames, limit=-8 if frames else None))


def run(code: str) -> dict[str, Any]:
    output = io.StringIO()
    error = None
    with contextlib.redirect_stdout(output), contextlib.redirect_stderr(output):
        try:
            tree = ast.parse(code, "<cell>")
            last = tree.body.pop() if tree.body and isinstance(tree.body[-1], ast.Expr) else None
            assert last is None or isinstance(last, ast.Expr)
            exec(compile(tree, "<cell>", "exec"), namespace)
            if last is not None:
                value = eval(compile(ast.Expression(last.value), "<cell>", "eval"), namespace)
                if value is not None:
                    print(repr(value))
        except BaseException as exc:  # the cell's own error (SystemExit and KeyboardInterrupt too): reported
            error = cell_traceback(exc)
    logs = output.getvalue()
    if len(logs) > LIMIT:
        logs = logs[:LIMIT] + f"\n[output truncated: {len(logs)} characters in all]"
    return {"logs": logs, "error": error, "images": figures()}


def captured(file: Any, limit: int) -> str:
    """What a command wrote to ``file``, cut to ``limit`` characters (read no further than needed)."""
    size = os.fstat(file.fileno()).st_size
    file.seek(0)
    text: str = file.read(limit * 4).decode("utf-8", errors="replace")
    if len(text) > limit or size > limit * 4:
        text = text[:limit] + f"\n[output truncated: {size} bytes in all]"
    return text


def shell(command: str, seconds: float, limit: int) -> dict[str, Any]:
    """Run ``command``; its output goes to files of the sandbox's /tmp (capped in size by the sandbox),
    never held whole in this process."""
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        process = subprocess.Popen(["/bin/sh", "-c", command], stdin=subprocess.DEVNULL, stdout=out, stderr=err,
                                   cwd="/mnt/data", start_new_session=True)  # fmt: skip
        try:
            code = process.wait(timeout=seconds)
            outcome: dict[str, Any] = {"type": "exit", "exit_code": code if code >= 0 else 128 - code}
        except subprocess.TimeoutExpired:
            outcome = {"type": "timeout"}
        with contextlib.suppress(OSError):
            os.killpg(process.pid, signal.SIGKILL)  # what it left running goes with it
        process.wait()
        return {"logs": "", "stdout": captured(out, limit), "stderr": captured(err, limit), "outcome": outcome}


def relay(egress: str, port: int) -> None:
    """127.0.0.1:``port`` in the sandbox's own network namespace, relayed to the server's proxy socket."""

    def pipe(source: socket.socket, sink: socket.socket) -> None:
        with contextlib.suppress(OSError):
            while data := source.recv(65536):
                sink.sendall(data)
        for end in (source, sink):
            with contextlib.suppress(OSError):
                end.shutdown(socket.SHUT_RDWR)

    def serve(client: socket.socket) -> None:
        server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            server.connect(egress)
        except OSError:
            client.close()
            return
        threading.Thread(target=pipe, args=(client, server), daemon=True).start()
        pipe(server, client)

    listener = socket.create_server(("127.0.0.1", port))
    while True:
        client, _ = listener.accept()
        threading.Thread(target=serve, args=(client,), daemon=True).start()


if EGRESS:
    threading.Thread(target=relay, args=(EGRESS, int(sys.argv[3])), daemon=True).start()

for line in io.TextIOWrapper(sys.stdin.buffer, encoding="utf-8"):
    request = json.loads(line)
    if "command" in request:
        answer = shell(request["command"], float(request["seconds"]), int(request.get("limit") or LIMIT))
    else:
        answer = run(request["code"])
    channel.write(json.dumps(answer) + "\n")
    channel.flush()
