"""How long Codex's instant interrupt takes to land: a response streams over a WebSocket; once its
first text arrives the client sends ``response.interrupt`` (``discard_partial_items``), and the time
from that frame to ``response.incomplete`` (reason ``interrupted``) is measured. On the simulator (a
slow profile: 100 ms to the first token, 20 tokens a second) and on an upstream that streams slowly
(the shared rig's mock: 50 ms between tokens). Prints the median and the worst of ``--tries`` runs (a
benchmark: it prints numbers and asserts nothing).

    python bench/interrupt_latency.py --rig-python /tmp/rig/bin/python [--tries 20]
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
import time
from pathlib import Path

from _server import RIG, responsa_server, rig_mock, simulator_server
from websockets.sync.client import connect

SLOW = "[models.slowpoke]\nttft_ms = 100\ntokens_per_second = 20\n"
ASK = "Reply with: " + " ".join(f"word{index}" for index in range(200))


def run(url: str, model: str, tries: int) -> list[float]:
    return [one(url, model) for _ in range(tries)]


def one(url: str, model: str) -> float:
    """Seconds from the interrupt frame to the response's end."""
    with connect(url.replace("http://", "ws://") + "/v1/responses") as socket:
        socket.send(json.dumps({"type": "response.create", "model": model, "input": ASK, "max_output_tokens": 400}))
        sent = 0.0
        response_id = ""
        while True:
            event = json.loads(socket.recv(timeout=60))
            if event["type"] == "response.created":
                response_id = event["response"]["id"]
            if event["type"] == "response.output_text.delta" and not sent:
                sent = time.perf_counter()
                socket.send(json.dumps({"type": "response.interrupt", "response_id": response_id,
                                        "mode": "discard_partial_items"}))  # fmt: skip
            if event["type"] in ("response.incomplete", "response.completed", "response.failed", "error"):
                reason = (event.get("response") or {}).get("incomplete_details") or {}
                if reason.get("reason") != "interrupted":
                    raise SystemExit(f"the response was not interrupted: {event['type']} {reason}")
                return time.perf_counter() - sent


def report(name: str, times: list[float]) -> None:
    print(f"interrupt on {name}: median {statistics.median(times) * 1000:.1f} ms, "
          f"max {max(times) * 1000:.1f} ms ({len(times)} tries)")  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tries", type=int, default=20)
    parser.add_argument("--rig", type=Path, default=RIG)
    parser.add_argument("--rig-python", default="python3", help="the interpreter for the rig's mock (aiohttp)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as directory:
        with simulator_server(SLOW, Path(directory)) as url:
            report("the simulator (20 tokens/s)", run(url, "slowpoke", args.tries))
        with rig_mock(args.rig_python, "--tokens", "400", "--delay-ms", "50", rig=args.rig, pin=None) as upstream:
            up_db = f"sqlite:///{Path(directory) / 'up.db'}"
            with responsa_server("--db", up_db, "--no-embedded", "--no-simulator", "--upstream", upstream) as url:
                report("an upstream streaming a token every 50 ms", run(url, "mock-model", args.tries))


if __name__ == "__main__":
    main()
