"""WebSocket mode against HTTP SSE on the shared rig's layout: the rig's mock upstream (64 tokens) and
this load on core 0, responsa alone on core 1 (SQLite). ``--connections`` clients each send responses
one after another for ``--seconds`` (the same body in both modes: ``stream`` over SSE, a
``response.create`` over WebSocket, with permessage-deflate offered as the websockets client and the
Agents SDK offer it unless ``--no-compression``), store true and false; prints responses a second and
the server's CPU per response (from /proc, its whole process tree), each cell's connections opened
once, warmed for a second, then measured. With ``--rounds N`` each cell runs
N times, the cells alternated round by round so the machine's drift falls on both modes alike, and
it prints each cell's medians and WebSocket's over SSE's, round by round. ``--rate R`` offers both
modes the same load, R responses a second over all the connections (each connection's next response
not before its turn), so that the server's CPU per response is compared at the same rate: unpaced,
this process's SSE client (httpx) sends fewer responses a second than its WebSocket client, and the
two servers are measured at different loads. A benchmark: it asserts nothing.

    python bench/websocket_load.py --rig-python /tmp/rig/bin/python [--seconds 10] [--connections 16 64]
        [--rounds 5] [--rate 250]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import tempfile
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

import httpx
from _server import RIG, cpu_seconds, process_tree, responsa_server, rig_mock
from websockets.asyncio.client import connect

BODY = {"model": "mock-model", "input": "Say something.", "max_output_tokens": 64}
"""What each response asks in both modes (bench/websocket_instructions.py sends it too)."""
ENDS = ("response.completed", "response.failed", "response.incomplete", "error")
"""A WebSocket response's last event."""


class Pace:
    """When one connection's next response may go: every ``connections / rate`` seconds from its own
    start (the connections' starts spread over one period); no wait without a rate."""

    def __init__(self, rate: float, connections: int, index: int) -> None:
        self.period = connections / rate if rate else 0.0
        self.due = time.monotonic() + index * self.period / max(connections, 1)

    async def turn(self) -> None:
        """Wait for this connection's turn; a turn missed is skipped, not caught up in a burst."""
        if self.period:
            now = time.monotonic()
            await asyncio.sleep(max(self.due - now, 0))
            self.due = max(self.due, now) + self.period


async def _ws_client(url: str, store: bool, begin: float, until: float, compression: bool, pace: Pace) -> int:
    done = 0
    async with connect(url.replace("http://", "ws://") + "/v1/responses", max_size=None,
                       compression="deflate" if compression else None) as socket:  # fmt: skip
        while time.monotonic() < until:
            await pace.turn()
            await socket.send(json.dumps({"type": "response.create", **BODY, "store": store}))
            while True:
                event = json.loads(await socket.recv())
                if event["type"] in ENDS:
                    done += event["type"] == "response.completed" and time.monotonic() >= begin
                    break
    return done


async def _sse_client(url: str, store: bool, begin: float, until: float, pace: Pace) -> int:
    done = 0
    async with httpx.AsyncClient(base_url=url, timeout=60) as client:
        while time.monotonic() < until:
            await pace.turn()
            body = {**BODY, "store": store, "stream": True}
            async with client.stream("POST", "/v1/responses", json=body) as reply:
                async for line in reply.aiter_lines():
                    if line.startswith("data: ") and '"type":"response.completed"' in line:
                        done += time.monotonic() >= begin
    return done


async def _load(
    url: str, tree: list[int], mode: str, store: bool, connections: int, seconds: float, compression: bool, rate: float
) -> tuple[int, float, float]:
    """One cell on connections opened once: a second to warm them (and the server's caches), then
    ``seconds`` measured: the responses completed in it, the server's CPU seconds, and its length."""
    begin = time.monotonic() + 1.0
    until = begin + seconds
    paces = [Pace(rate, connections, index) for index in range(connections)]
    if mode == "websocket":
        runs = [_ws_client(url, store, begin, until, compression, pace) for pace in paces]
    else:
        runs = [_sse_client(url, store, begin, until, pace) for pace in paces]

    async def cpu_at_begin() -> float:
        await asyncio.sleep(max(begin - time.monotonic(), 0))
        return sum(cpu_seconds(each) for each in tree)

    before = asyncio.create_task(cpu_at_begin())
    done = sum(await asyncio.gather(*runs))
    spent = sum(cpu_seconds(each) for each in tree) - await before
    return done, spent, time.monotonic() - begin


def measure(
    url: str, pid: int, mode: str, store: bool, connections: int, seconds: float, compression: bool, rate: float
) -> dict[str, Any]:
    load = _load(url, process_tree(pid), mode, store, connections, seconds, compression, rate)
    done, spent, elapsed = asyncio.run(load)
    return {"mode": mode, "store": store, "connections": connections, "rps": done / elapsed,
            "cpu_ms": spent / max(done, 1) * 1000, "responses": done}  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rig", type=Path, default=RIG)
    parser.add_argument("--rig-python", required=True)
    parser.add_argument("--seconds", type=float, default=10.0)
    parser.add_argument("--connections", type=int, nargs="+", default=[16])
    parser.add_argument("--no-compression", action="store_true")
    parser.add_argument("--rounds", type=int, default=1, help="runs of every cell, alternated")
    parser.add_argument("--rate", type=float, default=0.0, help="responses a second offered in both modes (0: unpaced)")
    parser.add_argument("--server-flag", action="append", default=[], help="more flags for responsa serve")
    args = parser.parse_args()
    os.sched_setaffinity(0, {0})  # the load beside the mock, as the rig's load.py runs
    with tempfile.TemporaryDirectory() as tmp, rig_mock(args.rig_python, "--tokens", "64", rig=args.rig) as upstream:
        pids: list[int] = []
        flags = ["--db", f"sqlite:///{Path(tmp) / 'ws.db'}", "--no-embedded", "--no-simulator", "--upstream", upstream]
        with responsa_server(*flags, *args.server_flag, pin=1, pids=pids) as url:
            rows = every_cell(url, pids[0], args)
    if args.rounds > 1:
        print_medians(rows)


Rows = dict[tuple[int, bool, str], list[dict[str, Any]]]


def every_cell(url: str, pid: int, args: argparse.Namespace) -> Rows:
    """Each cell (connections, store, mode) ``args.rounds`` times, alternated; each row printed as it comes."""
    rows: Rows = defaultdict(list)
    for _ in range(args.rounds):
        for connections in args.connections:
            for store in (True, False):
                for mode in ("websocket", "sse"):
                    row = measure(url, pid, mode, store, connections, args.seconds, not args.no_compression, args.rate)
                    rows[connections, store, mode].append(row)
                    cell = f"{mode:9} store={str(store).lower():5} c{connections}"
                    print(f"{cell}: {row['rps']:7.1f} responses/s, server CPU {row['cpu_ms']:.2f} ms a response "
                          f"({row['responses']})", flush=True)  # fmt: skip
    return rows


def print_medians(rows: Rows) -> None:
    """Each cell's medians over the rounds, and WebSocket's over SSE's (CPU, rate), median and per round."""
    for connections, store in dict.fromkeys((c, s) for c, s, _ in rows):
        socket, sse = rows[connections, store, "websocket"], rows[connections, store, "sse"]
        cpu = [w["cpu_ms"] / h["cpu_ms"] for w, h in zip(socket, sse, strict=True)]
        rate = [w["rps"] / h["rps"] for w, h in zip(socket, sse, strict=True)]
        medians = {mode: {key: statistics.median(r[key] for r in runs) for key in ("cpu_ms", "rps")}
                   for mode, runs in (("websocket", socket), ("sse", sse))}  # fmt: skip
        ws, http = medians["websocket"], medians["sse"]
        print(f"store={str(store).lower():5} c{connections}: websocket {ws['cpu_ms']:.2f} ms {ws['rps']:.0f}/s, "
              f"sse {http['cpu_ms']:.2f} ms {http['rps']:.0f}/s; "
              f"websocket/sse CPU {statistics.median(cpu):.2f} ({' '.join(f'{x:.2f}' for x in cpu)}), "
              f"rate {statistics.median(rate):.2f} ({' '.join(f'{x:.2f}' for x in rate)})")  # fmt: skip


if __name__ == "__main__":
    main()
