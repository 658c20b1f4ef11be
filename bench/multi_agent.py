"""What hosted multi-agent gains: a root with three subagents, each a short task with an answer of about
100 tokens, on the simulator with its latency on (a profile of 300 ms to the first token, 40 tokens a
second), against the same three tasks run one after another as three responses; with
``max_concurrent_subagents`` 1 and 4. The root's own two turns (writing its calls, then summing up the
results) are in its time, as they are in any delegation.
Over the WebSocket, as the Agents SDK sends it. Prints the median wall time of ``--tries`` runs of each
(a benchmark: it prints numbers and asserts nothing).

    python bench/multi_agent.py [--tries 5]
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
import time
from pathlib import Path

from _server import simulator_server
from websockets.sync.client import connect

PROFILE = "[models.paced]\nttft_ms = 300\ntokens_per_second = 40\n"
TASKS = ["Explain how bridges stand up", "Explain how rivers form", "Explain how bees dance"]
"""Short to ask, about 100 tokens each to answer (the simulator's prose)."""


def respond(url: str, body: dict[str, object]) -> dict[str, object]:
    """One response over the WebSocket, to its end."""
    with connect(url.replace("http://", "ws://") + "/v1/responses") as socket:
        socket.send(json.dumps({"type": "response.create", "model": "paced", **body}))
        while True:
            event = json.loads(socket.recv(timeout=300))
            if event["type"] in ("response.completed", "response.failed", "response.incomplete", "error"):
                if event["type"] != "response.completed":
                    raise SystemExit(f"the response did not complete: {event}")
                response: dict[str, object] = event["response"]
                return response


def one_after_another(url: str) -> float:
    started = time.perf_counter()
    for task in TASKS:
        respond(url, {"input": task})
    return time.perf_counter() - started


def delegated(url: str, concurrency: int) -> float:
    started = time.perf_counter()
    response = respond(url, {"input": "Delegate to helpers: " + "; ".join(TASKS),
                             "multi_agent": {"enabled": True, "max_concurrent_subagents": concurrency}})  # fmt: skip
    answer = response["output"][-1]["content"][0]["text"]  # type: ignore[index]
    if not str(answer).startswith("Subagents reported. task_1: "):
        raise SystemExit(f"the root did not report its subagents' results: {answer!r}")
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tries", type=int, default=5)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as directory:
        with simulator_server(PROFILE, Path(directory)) as url:
            runs = {
                "three responses one after another": lambda: one_after_another(url),
                "one root, 3 subagents, max_concurrent_subagents 1": lambda: delegated(url, 1),
                "one root, 3 subagents, max_concurrent_subagents 4": lambda: delegated(url, 4),
            }
            medians = {}
            for name, run in runs.items():
                times = [run() for _ in range(args.tries)]
                medians[name] = statistics.median(times)
                print(f"{name}: median {medians[name]:.2f} s (runs: {', '.join(f'{t:.2f}' for t in times)})")
            base = medians["three responses one after another"]
            for name, median in medians.items():
                print(f"  {name}: {median / base:.2f}x the three one after another")


if __name__ == "__main__":
    main()
