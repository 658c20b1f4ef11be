"""How long a cancel takes to land while the model is busy: a simulated o1 thinking hard (silent for
seconds before its first summary), streamed; the cancel is sent once the response is in progress, and
the time until ``POST …/cancel`` answers ``cancelled`` is measured. Prints the median and the worst of
``--tries`` runs (a benchmark: it prints numbers and asserts nothing).

    python bench/cancel_latency.py [--tries 10]
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


def one(url: str) -> float:
    """Seconds from sending the cancel to its answer."""
    started = threading.Event()
    found: dict[str, str] = {}

    def read() -> None:
        with httpx.stream("POST", f"{url}/v1/responses", json=BODY, timeout=60) as reply:
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
    sent = time.perf_counter()
    answer = httpx.post(f"{url}/v1/responses/{found['id']}/cancel", timeout=60).json()
    took = time.perf_counter() - sent
    assert answer["status"] == "cancelled", answer
    reader.join(30)
    return took


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tries", type=int, default=10)
    tries = parser.parse_args().tries
    with tempfile.TemporaryDirectory() as directory:
        db = f"sqlite:///{Path(directory) / 'r.db'}"
        with responsa_server("--db", db, "--no-embedded") as url:
            times = [one(url) for _ in range(tries)]
    print(f"cancel while o1 thinks: median {statistics.median(times) * 1000:.1f} ms, "
          f"max {max(times) * 1000:.1f} ms ({tries} tries)")  # fmt: skip


if __name__ == "__main__":
    main()
