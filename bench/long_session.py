"""Whether a long agent session stays flat: a 200-turn chain, a user message each turn and every fifth
turn a function call and its output the client ran (as an agent's history carries them), against the
rig's mock upstream (64 tokens) on core 0 with responsa alone on core 1 (SQLite). Three ways a client
holds the chain: WebSocket with ``store: false`` (the connection's cache), HTTP with ``store: true``
and ``previous_response_id``, and HTTP in a conversation.

This machine's speed drifts by more than the 5% asked of a flat chain within one run, so each turn
of the long chain is taken in turn with one of a short chain of the same kind (begun again every
``--short`` turns, on a connection of its own): the yardstick, at the same moment. Each turn's server
CPU is read around it from /proc (every thread's schedstat, to the nanosecond). For each block of 50
turns it prints the medians of the long and the short turns' CPU and their ratio, and then the last
block's ratio against the first's: 1.00 is flat. Each chain runs after a warm-up chain of its own.
One round of the three moves by more than 5% from the next (0.99x to 1.18x for one tree on
2026-12-03): ``--rounds N`` runs the three kinds N times over, alternated, and prints each kind's
figures and their median. A benchmark: it asserts nothing.

    python bench/long_session.py --rig-python /tmp/rig/bin/python [--turns 200] [--short 10] [--rounds 7]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
from _server import RIG, cpu_seconds_precise, process_tree, responsa_server, rig_mock
from websockets.sync.client import ClientConnection, connect

BLOCK = 50


def turn_input(turn: int) -> list[dict[str, Any]]:
    """What the client sends at ``turn``: a message, and every fifth turn a call it ran and its output."""
    items: list[dict[str, Any]] = []
    if turn % 5 == 4:
        call_id = f"call_{turn}"
        arguments, output = json.dumps({"n": turn}), f"result {turn}: {'x' * 200}"
        items += [{"type": "function_call", "call_id": call_id, "name": "lookup", "arguments": arguments},
                  {"type": "function_call_output", "call_id": call_id, "output": output}]  # fmt: skip
    return [*items, {"role": "user", "content": f"Turn {turn}: go on with the task."}]


class Chain:
    """One chain a client holds; ``turn()`` sends its next turn and waits for the response."""

    def __init__(self) -> None:
        self.turns = 0
        self.previous: str | None = None

    def turn(self) -> None:
        self.previous = self.send(turn_input(self.turns))
        self.turns += 1

    def restart(self) -> None:
        self.turns, self.previous = 0, None

    def send(self, items: list[dict[str, Any]]) -> str:
        raise NotImplementedError


class SocketChain(Chain):
    def __init__(self, socket: ClientConnection) -> None:
        super().__init__()
        self.socket = socket

    def send(self, items: list[dict[str, Any]]) -> str:
        chained = {"previous_response_id": self.previous} if self.previous else {}
        body = {"type": "response.create", "model": "mock-model", "store": False, "input": items,
                "max_output_tokens": 64, **chained}  # fmt: skip
        self.socket.send(json.dumps(body))
        while (event := json.loads(self.socket.recv(timeout=60)))["type"] not in ("response.completed", "error"):
            pass
        if event["type"] == "error":
            raise SystemExit(f"turn {self.turns}: {event}")
        return str(event["response"]["id"])


class HttpChain(Chain):
    def __init__(self, client: httpx.Client, conversation: bool) -> None:
        super().__init__()
        self.client, self.conversation = client, conversation
        self.thread: str | None = None

    def restart(self) -> None:
        super().restart()
        self.thread = None

    def send(self, items: list[dict[str, Any]]) -> str:
        body: dict[str, Any] = {"model": "mock-model", "store": True, "input": items, "max_output_tokens": 64}
        if self.conversation:
            self.thread = self.thread or self.client.post("/v1/conversations", json={}).json()["id"]
            body["conversation"] = self.thread
        elif self.previous is not None:
            body["previous_response_id"] = self.previous
        reply = self.client.post("/v1/responses", json=body)
        reply.raise_for_status()
        return str(reply.json()["id"])


def measure(name: str, pid: int, turns: int, short_every: int, long: Chain, short: Chain) -> float:
    """``turns`` turns of ``long``, each followed by one of ``short`` (begun again every ``short_every``);
    the last block's long/short ratio over the first's."""
    tree = process_tree(pid)

    def cpu_of(chain: Chain) -> float:
        before = sum(cpu_seconds_precise(each) for each in tree)
        chain.turn()
        return (sum(cpu_seconds_precise(each) for each in tree) - before) * 1000

    blocks: list[tuple[float, float]] = []
    long_cpu: list[float] = []
    short_cpu: list[float] = []
    for turn in range(turns):
        long_cpu.append(cpu_of(long))
        if turn % short_every == 0:
            short.restart()
        short_cpu.append(cpu_of(short))
        if (turn + 1) % BLOCK == 0:
            blocks.append((statistics.median(long_cpu), statistics.median(short_cpu)))
            long_cpu, short_cpu = [], []
    cells = [f"{spent:.3f} / {yardstick:.3f} ms = {spent / yardstick:.3f}" for spent, yardstick in blocks]
    (first_long, first_short), (last_long, last_short) = blocks[0], blocks[-1]
    flat = (last_long / last_short) / (first_long / first_short)
    print(f"{name}: long / short chain's CPU a turn, blocks of {BLOCK}: " + " | ".join(cells))
    print(f"{name}: last {BLOCK} turns against the first {BLOCK}, each over the short chain's: {flat:.3f}x "
          f"(the long chain alone: {last_long / first_long:.3f}x)", flush=True)  # fmt: skip
    return flat


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rig", type=Path, default=RIG)
    parser.add_argument("--rig-python", required=True)
    parser.add_argument("--turns", type=int, default=200)
    parser.add_argument("--short", type=int, default=10, help="turns after which the short chain begins again")
    parser.add_argument("--warmup", type=int, default=50, help="turns of a chain of its own before each")
    parser.add_argument("--rounds", type=int, default=1, help="times the three kinds are measured, alternated")
    args = parser.parse_args()
    os.sched_setaffinity(0, {0})
    with tempfile.TemporaryDirectory() as tmp, rig_mock(args.rig_python, "--tokens", "64", rig=args.rig) as upstream:
        pids: list[int] = []
        flags = ["--db", f"sqlite:///{Path(tmp) / 'long.db'}", "--no-embedded", "--no-simulator", "--upstream",
                 upstream]  # fmt: skip
        with responsa_server(*flags, pin=1, pids=pids) as url, httpx.Client(base_url=url, timeout=60) as client:
            socket_url = url.replace("http://", "ws://") + "/v1/responses"
            kinds: list[tuple[str, Callable[[], Chain]]] = [
                ("websocket store=false", lambda: SocketChain(connect(socket_url, compression=None, max_size=None))),
                ("http store=true chain", lambda: HttpChain(client, conversation=False)),
                ("http conversation", lambda: HttpChain(client, conversation=True)),
            ]
            flats: dict[str, list[float]] = {name: [] for name, _ in kinds}
            for _ in range(args.rounds):
                for name, make in kinds:
                    warmup = make()
                    for _ in range(args.warmup):
                        warmup.turn()
                    flats[name].append(measure(name, pids[0], args.turns, args.short, make(), make()))
    if args.rounds > 1:
        for name, found in flats.items():
            each = " ".join(f"{flat:.3f}" for flat in found)
            print(f"{name}: last over first, {args.rounds} rounds: {each}; median {statistics.median(found):.3f}x")


if __name__ == "__main__":
    main()
