"""What a long ``previous_response_id`` chain costs: latency of turn 1 against turn N of one chain.

responsa (SQLite store on, pinned to core 1) in front of the rig's mock upstream (64 tokens); each
chain's turns run one after another over one connection, each continuing the previous one, so
turn N replays N-1 earlier turns to the model. Prints the median latency per turn range over
--chains chains, and turn N's cost as a multiple of turn 1's. With --conversation-items N, instead: a
turn in a conversation holding N items against one in a new conversation, and the mock alone sent
as many messages (the floor).

    python bench/chain_cost.py --rig-python /tmp/rig/bin/python [--turns 100] [--chains 5]
    python bench/chain_cost.py --rig-python /tmp/rig/bin/python --conversation-items 1000 [--turns 60]
"""

from __future__ import annotations

import argparse
import statistics
import time
from dataclasses import dataclass
from pathlib import Path

import httpx
import orjson
from _server import responsa_on_rig, rig_arguments


def chain(client: httpx.Client, turns: int) -> list[float]:
    """Seconds per turn of one chain."""
    latencies, previous = [], None
    for turn in range(turns):
        body = {"model": "mock-model", "input": f"Turn {turn}: tell me more.", "max_output_tokens": 64}
        if previous:
            body["previous_response_id"] = previous
        started = time.perf_counter()
        reply = client.post("/v1/responses", json=body)
        latencies.append(time.perf_counter() - started)
        reply.raise_for_status()
        previous = reply.json()["id"]
    return latencies


def measure(rig_python: str, rig: Path, turns: int, chains: int) -> list[float]:
    """Milliseconds per turn, each the median over ``chains`` chains of ``turns`` turns."""
    with (
        responsa_on_rig(rig_python, "--tokens", "64", rig=rig) as (url, _),
        httpx.Client(base_url=url, timeout=60) as client,
    ):
        chain(client, 5)  # warm-up
        runs = [chain(client, turns) for _ in range(chains)]
    return [statistics.median(run[turn] for run in runs) * 1000 for turn in range(turns)]


@dataclass(frozen=True)
class ConversationCost:
    """Median milliseconds of a turn in a new conversation and in a long one, through responsa, and of
    the mock upstream alone sent the same number of messages: the floor, since every turn sends the
    whole history and the model must read it."""

    short: float
    long: float
    upstream_short: float
    upstream_long: float

    @property
    def ratio(self) -> float:
        return self.long / self.short

    @property
    def upstream_ratio(self) -> float:
        return self.upstream_long / self.upstream_short


def conversation_turns(rig_python: str, rig: Path, items: int, turns: int) -> ConversationCost:
    """A turn in a new conversation against one already holding ``items`` items (filled through the
    items API, 20 at a time), taking turns; and the mock alone, sent as many messages, in between."""
    with (
        responsa_on_rig(rig_python, "--tokens", "64", rig=rig) as (url, upstream),
        httpx.Client(base_url=url, timeout=60) as client,
    ):
        chain(client, 5)  # warm-up
        fresh = client.post("/v1/conversations", json={}).json()["id"]
        full = client.post("/v1/conversations", json={}).json()["id"]
        for start in range(0, items, 20):
            batch = [{"role": "user", "content": f"message {i}"} for i in range(start, min(start + 20, items))]
            client.post(f"/v1/conversations/{full}/items", json={"items": batch}).raise_for_status()
        latencies: dict[str, list[float]] = {"short": [], "long": [], "upstream_short": [], "upstream_long": []}
        for turn in range(turns):  # taking turns, so all see the same machine
            for conversation, kind in ((fresh, "short"), (full, "long")):
                body = {"model": "mock-model", "input": f"Turn {turn}", "max_output_tokens": 64,
                        "conversation": conversation}  # fmt: skip
                started = time.perf_counter()
                client.post("/v1/responses", json=body).raise_for_status()
                latencies[kind].append((time.perf_counter() - started) * 1000)
            for held, kind in ((0, "upstream_short"), (items, "upstream_long")):
                latencies[kind].append(_upstream_turn(client, upstream, held + 2 * turn + 1))
    return ConversationCost(**{kind: statistics.median(values) for kind, values in latencies.items()})


def _upstream_turn(client: httpx.Client, upstream: str, messages: int) -> float:
    """Milliseconds of one chat completion of ``messages`` short messages, straight from the mock (the
    body encoded before the clock starts, as responsa's is not the client's work either)."""
    history = [{"role": "user" if i % 2 else "assistant", "content": f"message {i}"} for i in range(messages)]
    body = orjson.dumps({"model": "mock-model", "messages": history, "max_tokens": 64})
    started = time.perf_counter()
    reply = client.post(f"{upstream}/chat/completions", content=body, headers={"content-type": "application/json"})
    reply.raise_for_status()
    return (time.perf_counter() - started) * 1000


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    rig_arguments(parser)
    parser.add_argument("--turns", type=int, default=100)
    parser.add_argument("--chains", type=int, default=5)
    parser.add_argument("--conversation-items", type=int, default=0)
    args = parser.parse_args()
    if args.conversation_items:
        cost = conversation_turns(args.rig_python, args.rig, args.conversation_items, args.turns)
        print(f"new conversation {cost.short:.2f} ms, {args.conversation_items:,} items {cost.long:.2f} ms: "
              f"{cost.ratio:.2f}x; the mock alone {cost.upstream_short:.2f} -> {cost.upstream_long:.2f} ms: "
              f"{cost.upstream_ratio:.2f}x (medians of {args.turns} turns each, taking turns)")  # fmt: skip
        return
    per_turn = measure(args.rig_python, args.rig, args.turns, args.chains)
    print(f"{'turns':<12} | {'median ms':>9}")
    print("-" * 25)
    step = max(args.turns // 10, 1)
    for start in range(0, args.turns, step):
        turns = f"{start + 1:>4}-{min(start + step, args.turns):<7}"
        print(f"{turns} | {statistics.median(per_turn[start : start + step]):>9.2f}")
    ratio = per_turn[-1] / per_turn[0]
    print(f"\nturn {args.turns} / turn 1: {ratio:.2f}x  (each the median of {args.chains} chains; 64 tokens)")


if __name__ == "__main__":
    main()
