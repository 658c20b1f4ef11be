"""What an upstream HTTP client costs a request by itself: aiohttp (what the Chat Completions backend
uses) against pyreqwest (Rust's reqwest, its runtime on its own threads), each driving the rig's mock
with the Chat Completions request responsa sends, c=16, JSON or a 64-token stream read to its end,
pinned to core 1 as responsa is (the mock on core 0). Alternated rounds, medians of CPU µs a request
(``time.process_time``: every thread of the process, the client's runtime included).

    /tmp/rig/bin/pip install aiohttp uvloop pyreqwest   # the rig's venv runs the clients
    python bench/upstream_clients.py --rig-python /tmp/rig/bin/python [--stream] [--rounds 3]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import subprocess
import time
from collections.abc import Awaitable, Callable
from pathlib import Path

CLIENTS = ("aiohttp", "pyreqwest")


async def _aiohttp(url: str, body: bytes, stream: bool) -> Callable[[], Awaitable[None]]:
    import aiohttp

    session = aiohttp.ClientSession()

    async def one() -> None:
        async with session.post(url, data=body, headers={"content-type": "application/json"}) as reply:
            if stream:
                async for _ in reply.content.iter_any():
                    pass
            else:
                await reply.read()

    return one


async def _pyreqwest(url: str, body: bytes, stream: bool) -> Callable[[], Awaitable[None]]:
    from pyreqwest.client import ClientBuilder  # type: ignore[import-not-found]

    client = await ClientBuilder().build().__aenter__()

    async def one() -> None:
        request = client.post(url).body_bytes(body).header("content-type", "application/json")
        async with request.build_streamed() as reply:
            while await reply.body_reader.read_chunk() is not None:
                pass

    return one


async def _measure(client: str, url: str, stream: bool, requests: int, concurrency: int) -> dict[str, float]:
    """One client's rate and CPU a request, after a warm-up."""
    messages = [{"role": "user", "content": "Hello there, how are you today?"}]
    body = json.dumps({"model": "mock-model", "messages": messages, "max_tokens": 64, "stream": stream}).encode()
    one = await (_aiohttp if client == "aiohttp" else _pyreqwest)(f"{url}/chat/completions", body, stream)

    async def worker(count: int) -> None:
        for _ in range(count):
            await one()

    await asyncio.gather(*(worker(50) for _ in range(concurrency)))
    wall, cpu = time.perf_counter(), time.process_time()
    await asyncio.gather(*(worker(requests // concurrency) for _ in range(concurrency)))
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    return {"rps": requests / wall, "cpu_us": cpu / requests * 1e6}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rig", type=str, help="the shared rig (default: ../shared/bench)")
    parser.add_argument("--rig-python", required=True)
    parser.add_argument("--stream", action="store_true")
    parser.add_argument("--requests", type=int, default=6000)
    parser.add_argument("--concurrency", type=int, default=16)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--client", choices=CLIENTS, help="measure this client against --url (the runs' own mode)")
    parser.add_argument("--url")
    args = parser.parse_args()
    if args.client:
        import uvloop

        print(json.dumps(uvloop.run(_measure(args.client, args.url, args.stream, args.requests, args.concurrency))))
        return
    from _server import RIG, rig_mock  # not in the clients' runs: the rig's venv has no httpx

    runs: dict[str, list[dict[str, float]]] = {client: [] for client in CLIENTS}
    with rig_mock(args.rig_python, "--tokens", "64", rig=Path(args.rig) if args.rig else RIG) as upstream:
        for _ in range(args.rounds):
            for client in CLIENTS:
                flags = ["--client", client, "--url", upstream, "--requests", str(args.requests),
                         "--concurrency", str(args.concurrency), *(["--stream"] if args.stream else [])]  # fmt: skip
                command = ["taskset", "-c", "1", args.rig_python, __file__, "--rig-python", args.rig_python, *flags]
                answer = subprocess.run(command, capture_output=True, text=True, check=True).stdout
                runs[client].append(json.loads(answer.strip().splitlines()[-1]))
    mode = "stream" if args.stream else "json"
    for client, measured in runs.items():
        cpu = ", ".join(f"{run['cpu_us']:.0f}" for run in measured)
        rate, spent = (statistics.median(run[key] for run in measured) for key in ("rps", "cpu_us"))
        print(f"{client:<9} {mode} c{args.concurrency}: median {rate:.0f} req/s, "
              f"{spent:.1f} µs of CPU a request  (runs: {cpu})")  # fmt: skip


if __name__ == "__main__":
    main()
