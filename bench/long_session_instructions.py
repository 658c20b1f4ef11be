"""Whether a long agent session stays flat, by the instructions the server's event loop executes a turn,
counted by valgrind (callgrind) in one server: what this machine's drift cannot move (bench/long_session.py
measures CPU time, whose rounds spread by ±6%). A chain of ``--turns`` turns (bench/long_session.py's:
a user message each turn, every fifth a function call and its output) after a warm-up chain, against
the rig's mock (64 tokens); the counters are zeroed before turn 0 and before the last ``--block``
turns, and dumped after each block. Only the event loop's thread is read (``--separate-threads``: the
SQLite checkpointer's thread works by the second, not by the turn). The event loop too has work by the
second (the server's periodic checks), and under valgrind a late turn takes longer than an early
one: the loop's instructions over ``--idle`` seconds with no request say how many a second, and those
are taken off each block for the time it took.

User-space instructions only: the upstream body's copies count one instruction a byte, far more than
their time. Runs of one tree still differ by a few percent (a new chain's early turns run some code
for the first time); compare a tree's run with another's. Needs valgrind.

    python bench/long_session_instructions.py --rig-python /tmp/rig/bin/python [--kind chain|conversation|websocket]
        [--keep DIR]
"""

from __future__ import annotations

import argparse
import shutil
import tempfile
import time
from pathlib import Path

import httpx
from _callgrind import counted_server, instructions
from _server import RIG, rig_mock
from long_session import Chain, HttpChain, SocketChain
from websockets.sync.client import connect


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rig", type=Path, default=RIG)
    parser.add_argument("--rig-python", required=True)
    parser.add_argument("--kind", choices=["chain", "conversation", "websocket"], default="chain")
    parser.add_argument("--turns", type=int, default=200)
    parser.add_argument("--block", type=int, default=50)
    parser.add_argument("--warmup", type=int, default=30)
    parser.add_argument("--idle", type=float, default=10, help="seconds with no request, for the work by the second")
    parser.add_argument("--keep", type=Path, help="copy the loop's dumps here (idle, first, late)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp, rig_mock(args.rig_python, "--tokens", "64", rig=args.rig) as upstream:
        with (
            counted_server(upstream, Path(tmp), ["--separate-threads=yes"], ["--no-code-interpreter"]) as server,
            httpx.Client(base_url=server.url, timeout=600) as client,
        ):

            def chain() -> Chain:
                if args.kind == "websocket":
                    return SocketChain(connect(server.url.replace("http", "ws", 1) + "/v1/responses", compression=None))
                return HttpChain(client, conversation=args.kind == "conversation")

            warmup = chain()
            for _ in range(args.warmup):
                warmup.turn()
            server.zero()
            started = time.monotonic()
            time.sleep(args.idle)
            server.dump("idle")
            idle_seconds = time.monotonic() - started
            measured, last, seconds = chain(), args.turns - args.block, []
            for turn in range(args.turns):
                if turn in (0, last):
                    server.zero()
                    started = time.monotonic()
                measured.turn()
                if turn in (args.block - 1, args.turns - 1):
                    server.dump(f"turn{turn}")
                    seconds.append(time.monotonic() - started)
        loop_thread = [Path(f"{server.counts}.{part}-01") for part in (1, 2, 3)]  # the event loop's: thread 1
        if args.keep is not None:
            args.keep.mkdir(parents=True, exist_ok=True)
            for dump, name in zip(loop_thread, ("idle", "first", "late"), strict=True):
                shutil.copy(dump, args.keep / f"{args.kind}-{name}.out")
        a_second = instructions(loop_thread[0]) / idle_seconds
        first, late = ((instructions(dump) - a_second * spent) / args.block
                       for dump, spent in zip(loop_thread[1:], seconds, strict=True))  # fmt: skip
    print(f"{args.kind}: the event loop's instructions a turn, turns 0-{args.block - 1}: {first:,.0f}; "
          f"turns {last}-{args.turns - 1}: {late:,.0f} ({late / first:.3f}x); {a_second:,.0f} a second idle, "
          f"taken off; the blocks took {seconds[0]:.0f} s and {seconds[1]:.0f} s")  # fmt: skip


if __name__ == "__main__":
    main()
