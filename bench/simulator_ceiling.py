"""The server's own ceiling: load against the simulator with latency off (no model cost at all).

Starts `responsa serve --no-embedded --no-sim-latency` on loopback (pinned to one core with
--cpu when given, e.g. --cpu 1), and drives it with an asyncio load generator (httpx) at several
concurrencies, JSON and streaming, store on. Prints requests/s and median latency per run.

    python bench/simulator_ceiling.py [--seconds 10] [--concurrency 1 16 64] [--tokens 64] [--cpu 1]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import tempfile
import time
from pathlib import Path

import httpx
from _server import responsa_server

INPUT = "Write a short story about a lighthouse keeper."


async def one(client: httpx.AsyncClient, stream: bool, tokens: int) -> float:
    body = {"model": "sim", "input": INPUT, "max_output_tokens": tokens, "stream": stream}
    started = time.perf_counter()
    if stream:
        async with client.stream("POST", "/v1/responses", json=body) as reply:
            reply.raise_for_status()
            async for _ in reply.aiter_bytes():
                pass
    else:
        (await client.post("/v1/responses", json=body)).raise_for_status()
    return time.perf_counter() - started


async def load(url: str, concurrency: int, seconds: float, stream: bool, tokens: int) -> tuple[float, float, int]:
    limits = httpx.Limits(max_connections=concurrency, max_keepalive_connections=concurrency)
    latencies: list[float] = []
    errors = 0
    async with httpx.AsyncClient(base_url=url, limits=limits, timeout=60) as client:
        for _ in range(concurrency):  # warm up
            await one(client, stream, tokens)
        deadline = time.perf_counter() + seconds

        async def worker() -> None:
            nonlocal errors
            while time.perf_counter() < deadline:
                try:
                    latencies.append(await one(client, stream, tokens))
                except httpx.HTTPError:
                    errors += 1

        started = time.perf_counter()
        await asyncio.gather(*(worker() for _ in range(concurrency)))
        elapsed = time.perf_counter() - started
    return len(latencies) / elapsed, statistics.median(latencies) * 1000, errors


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seconds", type=float, default=10)
    parser.add_argument("--concurrency", type=int, nargs="+", default=[1, 16, 64])
    parser.add_argument("--tokens", type=int, default=64)
    parser.add_argument("--cpu", type=int, default=None, help="pin the server to this core (taskset)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        db = f"sqlite:///{Path(tmp) / 'ceiling.db'}"
        with responsa_server("--db", db, "--no-embedded", "--no-sim-latency", pin=args.cpu) as url:
            print(f"{'mode':<7} | {'c':>3} | {'req/s':>8} | {'p50 ms':>8} | errors")
            print("-" * 46)
            for stream in (False, True):
                for concurrency in args.concurrency:
                    rps, p50, errors = asyncio.run(load(url, concurrency, args.seconds, stream, args.tokens))
                    mode = "stream" if stream else "json"
                    print(f"{mode:<7} | {concurrency:>3} | {rps:>8.1f} | {p50:>8.2f} | {errors}")
    print(f"\n{args.tokens} output tokens per response, store on (SQLite), {os.cpu_count()} cores on the machine")


if __name__ == "__main__":
    main()
