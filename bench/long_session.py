"""Whether a long agent session stays flat: a 200-turn chain, a user message each turn and every fifth
turn a function call and its output the client ran (as an agent's history carries them), against the
rig's mock upstream (64 tokens) on core 0 with responsa alone on core 1 (SQLite). Three ways a client
holds the chain: WebSocket with ``store: false`` (the connection's cache), HTTP with ``store: true``
and ``previous_response_id``, and HTTP in a conversation. Each chain runs after a warm-up chain of its
own (the server's first turns are not the chain's), and prints the server's CPU per turn (its threads'
from /proc, to the nanosecond) and the median turn time for each block of 50 turns, and the last
block against the first. A benchmark: it asserts nothing.

    python bench/long_session.py --rig-python /tmp/rig/bin/python [--turns 200] [--warmup 50]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
from _server import RIG, cpu_seconds_precise, process_tree, responsa_server, rig_mock
from websockets.sync.client import connect

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


def websocket_chain(url: str, turns: int, step: Callable[[int, float], None]) -> None:
    with connect(url.replace("http://", "ws://") + "/v1/responses", compression=None, max_size=None) as socket:
        previous = None
        for turn in range(turns):
            began = time.perf_counter()
            body = {"type": "response.create", "model": "mock-model", "store": False, "input": turn_input(turn),
                    "max_output_tokens": 64, **({"previous_response_id": previous} if previous else {})}  # fmt: skip
            socket.send(json.dumps(body))
            while (event := json.loads(socket.recv(timeout=60)))["type"] not in ("response.completed", "error"):
                pass
            if event["type"] == "error":
                raise SystemExit(f"turn {turn}: {event}")
            previous = event["response"]["id"]
            step(turn, time.perf_counter() - began)


def http_chain(url: str, turns: int, step: Callable[[int, float], None], conversation: bool) -> None:
    with httpx.Client(base_url=url, timeout=60) as client:
        thread = client.post("/v1/conversations", json={}).json()["id"] if conversation else None
        previous = None
        for turn in range(turns):
            began = time.perf_counter()
            body: dict[str, Any] = {
                "model": "mock-model",
                "store": True,
                "input": turn_input(turn),
                "max_output_tokens": 64,
            }
            if thread is not None:
                body["conversation"] = thread
            elif previous is not None:
                body["previous_response_id"] = previous
            reply = client.post("/v1/responses", json=body)
            reply.raise_for_status()
            previous = reply.json()["id"]
            step(turn, time.perf_counter() - began)


def measure(name: str, pid: int, turns: int, run: Callable[[Callable[[int, float], None]], None]) -> None:
    tree = process_tree(pid)
    blocks: list[tuple[float, list[float]]] = []
    cpu, times = sum(cpu_seconds_precise(each) for each in tree), []

    def step(turn: int, seconds: float) -> None:
        nonlocal cpu, times
        times.append(seconds)
        if (turn + 1) % BLOCK == 0:
            now = sum(cpu_seconds_precise(each) for each in tree)
            blocks.append(((now - cpu) / BLOCK * 1000, times))
            cpu, times = now, []

    run(step)
    cells = [f"{spent:.2f} ms CPU, {statistics.median(block) * 1000:.1f} ms" for spent, block in blocks]
    first, last = blocks[0], blocks[-1]
    print(f"{name}: " + " | ".join(cells))
    print(f"{name}: last {BLOCK} turns / first {BLOCK}: CPU {last[0] / first[0]:.2f}x, "
          f"turn time {statistics.median(last[1]) / statistics.median(first[1]):.2f}x", flush=True)  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rig", type=Path, default=RIG)
    parser.add_argument("--rig-python", required=True)
    parser.add_argument("--turns", type=int, default=200)
    parser.add_argument(
        "--warmup", type=int, default=50, help="turns of a chain of their own, before each measured one"
    )
    args = parser.parse_args()
    os.sched_setaffinity(0, {0})
    with tempfile.TemporaryDirectory() as tmp, rig_mock(args.rig_python, "--tokens", "64", rig=args.rig) as upstream:
        pids: list[int] = []
        flags = [
            "--db",
            f"sqlite:///{Path(tmp) / 'long.db'}",
            "--no-embedded",
            "--no-simulator",
            "--upstream",
            upstream,
        ]
        with responsa_server(*flags, pin=1, pids=pids) as url:
            chains: list[tuple[str, Callable[[int, Callable[[int, float], None]], None]]] = [
                ("websocket store=false", lambda turns, step: websocket_chain(url, turns, step)),
                ("http store=true chain", lambda turns, step: http_chain(url, turns, step, False)),
                ("http conversation", lambda turns, step: http_chain(url, turns, step, True)),
            ]
            for name, chain in chains:
                chain(args.warmup, lambda turn, seconds: None)  # a chain of its own: the server's first turns
                measure(name, pids[0], args.turns, lambda step, chain=chain: chain(args.turns, step))  # type: ignore[misc]


if __name__ == "__main__":
    main()
