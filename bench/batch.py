"""Batches: how fast a batch runs alone, what it does to interactive latency, and what a kill -9 in
its middle loses. For the simulator (10,000 ``/v1/responses`` lines) and, with ``--embedded``, the
packaged model (500 lines):

1. interactive load alone: ``--clients`` streams back to back for ``--seconds``; TTFB p50/p99;
2. the batch alone: lines per second, creation to ``completed``;
3. the same batch again, once its file is checked (how long that took is printed), beside the same
   interactive load: the interactive TTFB p50/p99 again (one run, one server: the figures compare),
   and alone once more after it (the store then holds what both batches stored);
4. a batch killed with SIGKILL once a fifth of it is done, the server restarted on the same store:
   lines lost (a custom_id missing from the output) and duplicated (one seen twice).

    python bench/batch.py [--lines 10000] [--clients 8] [--seconds 20] [--concurrency 64] [--no-latency]
    python bench/batch.py --embedded [--lines 500] [--clients 2]
"""

from __future__ import annotations

import argparse
import asyncio
import io
import json
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

import httpx
import openai
from _server import free_port

SIMULATED = "gpt-4.1"
EMBEDDED = "smollm2-135m-instruct"


def serve(db: str, flags: list[str]) -> tuple[subprocess.Popen[bytes], str]:
    port = free_port()
    command = [sys.executable, "-m", "responsa.cli", "serve", "--port", str(port), "--db", db,
               "--log-level", "warning", "--background-lease-secs", "2", *flags]  # fmt: skip
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, env=os.environ.copy())
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 120
    while True:
        try:
            httpx.get(f"{url}/health").raise_for_status()
            return process, url
        except httpx.TransportError:
            if process.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError("the server did not start") from None
            time.sleep(0.1)


def batch_file(client: openai.OpenAI, model: str, lines: int, tokens: int) -> str:
    text = "\n".join(json.dumps({"custom_id": f"line-{index}", "method": "POST", "url": "/v1/responses",
                                 "body": {"model": model, "input": f"Write about item {index}.",
                                          "max_output_tokens": tokens}})
                     for index in range(lines))  # fmt: skip
    return client.files.create(file=("lines.jsonl", io.BytesIO(text.encode())), purpose="batch").id


def start_batch(client: openai.OpenAI, file_id: str) -> str:
    return client.batches.create(input_file_id=file_id, endpoint="/v1/responses", completion_window="24h").id


def wait_done(client: openai.OpenAI, batch_id: str, at_least: int | None = None) -> openai.types.Batch:
    """The batch once it ended (or, with ``at_least``, once that many lines ran)."""
    while True:
        batch = client.batches.retrieve(batch_id)
        counts = batch.request_counts
        done = 0 if counts is None else counts.completed + counts.failed
        if batch.status in ("completed", "failed", "expired", "cancelled") or (
            at_least is not None and done >= at_least
        ):
            return batch
        time.sleep(0.2)


async def interactive(url: str, model: str, clients: int, seconds: float, tokens: int) -> list[float]:
    """Streams back to back from ``clients`` clients: each one's time to first byte, in ms."""
    body = {"model": model, "input": "Say something short.", "stream": True, "max_output_tokens": tokens}
    ttfb: list[float] = []
    deadline = time.monotonic() + seconds

    async def one_client(http: httpx.AsyncClient) -> None:
        while time.monotonic() < deadline:
            started = time.monotonic()
            async with http.stream("POST", f"{url}/v1/responses", json=body) as reply:
                first = True
                async for _ in reply.aiter_raw():
                    if first:
                        ttfb.append((time.monotonic() - started) * 1000)
                        first = False

    async with httpx.AsyncClient(timeout=120) as http:
        await asyncio.gather(*(one_client(http) for _ in range(clients)))
    return ttfb


def percentiles(values: list[float]) -> str:
    if not values:
        return "no requests"
    cut = statistics.quantiles(values, n=100) if len(values) > 1 else [values[0]] * 99
    slowest = max(range(len(values)), key=values.__getitem__)
    return (
        f"p50 {statistics.median(values):.0f} ms, p99 {cut[98]:.0f} ms, max {values[slowest]:.0f} ms "
        f"(request {slowest + 1} of {len(values)}, in the order they got their first byte)"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--embedded", action="store_true", help="the packaged model instead of the simulator")
    parser.add_argument("--lines", type=int)
    parser.add_argument("--clients", type=int)
    parser.add_argument("--seconds", type=float, default=20)
    parser.add_argument("--tokens", type=int, default=16, help="max_output_tokens of every request")
    parser.add_argument("--concurrency", type=int, default=64, help="the server's --batch-concurrency")
    parser.add_argument("--no-latency", action="store_true", help="the simulator's latency profiles off")
    args = parser.parse_args()
    model = EMBEDDED if args.embedded else SIMULATED
    lines = args.lines or (500 if args.embedded else 10_000)
    clients = args.clients or (2 if args.embedded else 8)
    flags = ["--no-simulator", "--parallel", "4"] if args.embedded else ["--no-embedded"]
    flags += ["--batch-concurrency", str(args.concurrency), *(["--no-sim-latency"] * args.no_latency)]
    with tempfile.TemporaryDirectory() as tmp:
        db = f"sqlite:///{Path(tmp) / 'batch.db'}"
        process, url = serve(db, flags)
        client = openai.OpenAI(base_url=f"{url}/v1", api_key="unused", max_retries=0, timeout=600)
        try:
            asyncio.run(interactive(url, model, clients, 2, args.tokens))  # warm up (loads the model)
            alone = asyncio.run(interactive(url, model, clients, args.seconds, args.tokens))
            file_id = batch_file(client, model, lines, args.tokens)
            started = time.monotonic()
            batch = wait_done(client, start_batch(client, file_id))
            took = time.monotonic() - started
            assert batch.status == "completed", batch
            print(f"{model}: {lines} lines alone in {took:.1f} s: {lines / took:.0f} lines/s")
            busy_batch = start_batch(client, file_id)
            checked = time.monotonic()
            while client.batches.retrieve(busy_batch).status == "validating":
                time.sleep(0.05)
            print(f"its file checked and its lines stored in {time.monotonic() - checked:.1f} s")
            beside = asyncio.run(interactive(url, model, clients, args.seconds, args.tokens))
            during = client.batches.retrieve(busy_batch).request_counts
            print(f"interactive alone:        {percentiles(alone)}")
            print(f"interactive beside batch: {percentiles(beside)} "
                  f"(the batch ran {during.completed if during else 0} lines meanwhile)")  # fmt: skip
            wait_done(client, busy_batch)
            after = asyncio.run(interactive(url, model, clients, args.seconds, args.tokens))
            print(f"interactive alone again:  {percentiles(after)} (the store now holds both batches)")
            killed = start_batch(client, file_id)
            wait_done(client, killed, at_least=lines // 5)
            process.send_signal(signal.SIGKILL)
            process.wait()
            process, url = serve(db, flags)
            client = openai.OpenAI(base_url=f"{url}/v1", api_key="unused", max_retries=0, timeout=600)
            batch = wait_done(client, killed)
            assert batch.output_file_id is not None, batch
            seen = Counter(json.loads(entry)["custom_id"] for entry in
                           client.files.content(batch.output_file_id).text.splitlines())  # fmt: skip
            lost = lines - len(seen)
            duplicated = sum(count - 1 for count in seen.values())
            print(f"killed with SIGKILL at a fifth and restarted: {batch.status}, {lost} lines lost, "
                  f"{duplicated} duplicated")  # fmt: skip
        finally:
            process.terminate()
            process.wait(30)


if __name__ == "__main__":
    main()
