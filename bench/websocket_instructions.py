"""WebSocket mode against HTTP SSE by the instructions the server executes per response, counted by
valgrind (callgrind) in one server: what the machine's drift and the load's shape cannot move. The
server runs under callgrind in front of the rig's mock (64 tokens); after a warm-up in both modes the
counters are zeroed, ``--responses`` responses are sent in one mode over ``--connections`` connections
(the same body: ``stream`` over SSE, a ``response.create`` over WebSocket, without compression), the
count is dumped, and so on for the other mode, ``--rounds`` times alternated.

User-space instructions only (system calls, cache misses and waits are not in it), at the slow pace
of a server under valgrind, where every mode's batches are full: it says how much work each mode's
code does for a response, not its time (bench/websocket_load.py measures that). Needs valgrind.

    python bench/websocket_instructions.py --rig-python /tmp/rig/bin/python [--store false] [--responses 200]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import tempfile
from pathlib import Path

import httpx
from _callgrind import counted_server, instructions
from _server import RIG, rig_mock
from websocket_load import BODY, ENDS
from websockets.asyncio.client import connect


async def _socket_responses(url: str, store: bool, count: int) -> None:
    async with connect(url.replace("http://", "ws://") + "/v1/responses", max_size=None, compression=None) as socket:
        for _ in range(count):
            await socket.send(json.dumps({"type": "response.create", **BODY, "store": store}))
            while (event := json.loads(await socket.recv()))["type"] not in ENDS:
                pass
            assert event["type"] == "response.completed", event


async def _sse_responses(url: str, store: bool, count: int) -> None:
    async with httpx.AsyncClient(base_url=url, timeout=600) as client:
        for _ in range(count):
            async with client.stream("POST", "/v1/responses", json={**BODY, "stream": True, "store": store}) as reply:
                async for _line in reply.aiter_lines():
                    pass


MODES = {"websocket": _socket_responses, "sse": _sse_responses}


def _send(mode: str, url: str, store: bool, responses: int, connections: int) -> None:
    each = responses // connections

    async def run() -> None:
        await asyncio.gather(*(MODES[mode](url, store, each) for _ in range(connections)))

    asyncio.run(run())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rig", type=Path, default=RIG)
    parser.add_argument("--rig-python", required=True)
    parser.add_argument("--store", choices=["true", "false"], default="false")
    parser.add_argument("--responses", type=int, default=200)
    parser.add_argument("--connections", type=int, default=4)
    parser.add_argument("--rounds", type=int, default=2)
    args = parser.parse_args()
    store, responses = args.store == "true", args.responses - args.responses % args.connections
    with tempfile.TemporaryDirectory() as tmp, rig_mock(args.rig_python, "--tokens", "64", rig=args.rig) as upstream:
        with counted_server(upstream, Path(tmp), serve=["--no-code-interpreter"]) as server:
            for mode in MODES:
                _send(mode, server.url, store, 8 * args.connections, args.connections)  # warm: caches, connections
            for round_ in range(args.rounds):
                for mode in MODES:
                    server.zero()
                    _send(mode, server.url, store, responses, args.connections)
                    server.dump(f"{mode}-{round_}")
        for dump in sorted(Path(tmp).glob(f"{server.counts.name}.*"), key=lambda path: int(path.suffix[1:])):
            lines = dump.read_text().splitlines()
            trigger = next(line.split()[-1] for line in lines if line.startswith("desc: Trigger"))
            print(f"{trigger:12} store={args.store}: {instructions(dump) / responses:,.0f} instructions a response")


if __name__ == "__main__":
    main()
