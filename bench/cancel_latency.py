"""How long a cancel takes to land while the model is busy: a simulated o1 thinking hard (silent for
seconds before its first summary), streamed; the cancel is sent once the response is in progress, and
the time until ``POST …/cancel`` answers ``cancelled`` is measured. Prints the median and the worst of
``--tries`` runs (a benchmark: it prints numbers and asserts nothing). With ``--workers 2`` the
cancel is sent on new connections until one reaches the other worker (``x-responsa-worker``): it
lands through the store (see ``engine/responses/_cancels.py``).

    python bench/cancel_latency.py [--tries 10] [--workers 2]
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
import threading
import time
from pathlib import Path

import httpx
from _server import responsa_server

BODY = {"model": "o1", "input": "Prove that there are infinitely many primes, carefully.", "stream": True,
        "reasoning": {"effort": "high", "summary": "auto"}}  # fmt: skip


def one(url: str, other_worker: bool = False) -> float:
    """Seconds from sending the cancel to its answer."""
    started = threading.Event()
    found: dict[str, str] = {}

    def read() -> None:
        with httpx.stream("POST", f"{url}/v1/responses", json=BODY, timeout=60) as reply:
            found["worker"] = reply.headers.get("x-responsa-worker", "")
            for line in reply.iter_lines():
                if line.startswith("data: {"):
                    event = json.loads(line[6:])
                    if event["type"] == "response.in_progress":
                        found["id"] = event["response"]["id"]
                        started.set()

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    assert started.wait(30)
    time.sleep(0.2)  # the model is thinking now
    with httpx.Client(timeout=60) as fresh:  # a new connection: the kernel picks its worker
        sent = time.perf_counter()
        reply = fresh.post(f"{url}/v1/responses/{found['id']}/cancel")
        took = time.perf_counter() - sent
    assert reply.json()["status"] == "cancelled", reply.text
    reader.join(30)
    if other_worker and reply.headers.get("x-responsa-worker") == found["worker"]:
        return one(url, other_worker)  # it landed on the response's own worker: try again
    return took


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tries", type=int, default=10)
    parser.add_argument("--workers", type=int, default=1)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as directory:
        db = f"sqlite:///{Path(directory) / 'r.db'}"
        with responsa_server("--db", db, "--no-embedded", "--workers", str(args.workers)) as url:
            times = [one(url, args.workers > 1) for _ in range(args.tries)]
    where = " from the other worker" if args.workers > 1 else ""
    print(f"cancel while o1 thinks{where}: median {statistics.median(times) * 1000:.1f} ms, "
          f"max {max(times) * 1000:.1f} ms ({args.tries} tries)")  # fmt: skip


if __name__ == "__main__":
    main()
