"""The least a Python Responses gateway with a durable store can be: the floor against which
responsa's share of the mock alone (issue 30 asks for 35%) and its added time to first token
(bench/ttft_overhead.py) are read.

Served by the stack responsa runs on (Starlette on uvicorn with uvloop and httptools, aiohttp to the
upstream, orjson), it does only what a stored response must: checks the body against a small
pydantic model, calls the upstream (streaming or not), builds the response as a plain dict, and
saves it and its two items in SQLite (WAL, ``synchronous=NORMAL``, writes gathered into one
transaction, as responsa's store does) before the reply or the ``response.completed`` event goes out.
No ids checked, no events but those the rig's load.py reads, no tools, history, metrics or tenants.

    python bench/lean_gateway.py --rig-python /tmp/rig/bin/python      # the rig at c=16, then the mock alone
    python bench/lean_gateway.py --serve PORT UPSTREAM_V1_URL DB_PATH   # the gateway alone
"""

from __future__ import annotations

import argparse
import asyncio
import secrets
import sqlite3
import statistics
import sys
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson
from _server import lean_gateway, mock_alone_rps, rig_arguments, rig_load, rig_mock
from pydantic import BaseModel

MODES = ("json", "stream")


class _Create(BaseModel):
    model: str
    input: str
    max_output_tokens: int | None = None
    stream: bool = False
    store: bool = True


class _GroupCommit:
    """Saves asked for while one is being gathered share a transaction; each waits for the commit."""

    def __init__(self, path: str) -> None:
        self._db = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
        for pragma in ("journal_mode=WAL", "synchronous=NORMAL"):
            self._db.execute(f"PRAGMA {pragma}")
        self._db.execute("CREATE TABLE IF NOT EXISTS responses (id TEXT PRIMARY KEY, body TEXT, stored_at REAL)")
        self._db.execute("CREATE TABLE IF NOT EXISTS items (response_id TEXT, position INT, body TEXT)")
        self._waiting: list[tuple[tuple[str, str, list[str]], asyncio.Future[None]]] = []

    async def save(self, response_id: str, body: str, items: list[str]) -> None:
        done = asyncio.get_running_loop().create_future()
        self._waiting.append(((response_id, body, items), done))
        if len(self._waiting) == 1:
            await asyncio.sleep(0)  # let the others of this loop turn join
            batch, self._waiting = self._waiting, []
            self._db.execute("BEGIN IMMEDIATE")
            for (rid, text, bodies), _ in batch:
                self._db.execute("INSERT INTO responses VALUES (?, ?, ?)", (rid, text, time.time()))
                self._db.executemany("INSERT INTO items VALUES (?, ?, ?)", [(rid, n, b) for n, b in enumerate(bodies)])
            self._db.execute("COMMIT")
            for _, waiter in batch:
                waiter.set_result(None)
        await done


def _app(upstream: str, db_path: str) -> Any:
    import aiohttp
    from starlette.applications import Starlette
    from starlette.requests import Request
    from starlette.responses import Response, StreamingResponse
    from starlette.routing import Route

    store = _GroupCommit(db_path)
    sessions: list[aiohttp.ClientSession] = []

    def response_of(create: _Create, text: str, usage: dict[str, int]) -> dict[str, Any]:
        part = {"type": "output_text", "text": text, "annotations": []}
        message = {"type": "message", "id": f"msg_{secrets.token_hex(24)}", "role": "assistant",
                   "status": "completed", "content": [part]}  # fmt: skip
        return {"id": f"resp_{secrets.token_hex(24)}", "object": "response", "created_at": int(time.time()),
                "status": "completed", "model": create.model, "output": [message], "usage": usage}  # fmt: skip

    async def saved(create: _Create, response: dict[str, Any]) -> bytes:
        body = orjson.dumps(response)
        if create.store:
            head = orjson.dumps({key: value for key, value in response.items() if key != "output"}).decode()
            question = orjson.dumps({"type": "message", "role": "user", "content": create.input}).decode()
            await store.save(response["id"], head, [question, orjson.dumps(response["output"][0]).decode()])
        return body

    async def frames(create: _Create, reply: aiohttp.ClientResponse) -> AsyncIterator[bytes]:
        """The stream, one write per network read (as responsa batches them)."""
        yield b'event: response.created\ndata: {"type":"response.created"}\n\n'
        parts: list[str] = []
        usage: dict[str, int] = {}
        rest = b""
        async for received in reply.content.iter_any():
            *lines, rest = (rest + received).split(b"\n")
            out = []
            for line in lines:
                if not line.startswith(b"data: {"):
                    continue
                chunk = orjson.loads(line[6:])
                usage = chunk.get("usage") or usage
                delta = (chunk.get("choices") or [{}])[0].get("delta", {}).get("content")
                if delta:
                    parts.append(delta)
                    event = {"type": "response.output_text.delta", "delta": delta}
                    out.append(b"event: response.output_text.delta\ndata: " + orjson.dumps(event) + b"\n\n")
            if out:
                yield b"".join(out)
        reply.release()
        body = await saved(create, response_of(create, "".join(parts), usage))
        yield b'event: response.completed\ndata: {"type":"response.completed","response":' + body + b"}\n\n"

    async def create_response(request: Request) -> Response:
        if not sessions:
            sessions.append(aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=0)))
        create = _Create.model_validate(orjson.loads(await request.body()))
        chat = {"model": create.model, "messages": [{"role": "user", "content": create.input}],
                "max_tokens": create.max_output_tokens, "stream": create.stream}  # fmt: skip
        if create.stream:
            chat["stream_options"] = {"include_usage": True}
        reply = await sessions[0].post(
            f"{upstream}/chat/completions", data=orjson.dumps(chat), headers={"content-type": "application/json"}
        )
        if create.stream:
            return StreamingResponse(frames(create, reply), media_type="text/event-stream")
        completion = orjson.loads(await reply.read())
        text = completion["choices"][0]["message"]["content"]
        body = await saved(create, response_of(create, text, completion["usage"]))
        return Response(body, media_type="application/json")

    async def health(_: Request) -> Response:
        return Response(b"ok")

    routes = [Route("/v1/responses", create_response, methods=["POST"]), Route("/health", health)]
    return Starlette(routes=routes)


def serve(port: int, upstream: str, db_path: str) -> None:
    import uvicorn

    uvicorn.run(_app(upstream, db_path), host="127.0.0.1", port=port, loop="uvloop", http="httptools",
                log_level="warning", access_log=False)  # fmt: skip


@dataclass(frozen=True)
class LeanRow:
    """The lean gateway's median rate and CPU per request in one mode at c=16, and the mock alone's."""

    mode: str
    rps: float
    cpu_ms: float
    mock_rps: float

    @property
    def share(self) -> float:
        return self.rps / self.mock_rps if self.mock_rps else 0.0


def measure(rig_python: str, rig: Path, seconds: float, repeat: int, concurrency: int = 16) -> list[LeanRow]:
    """The lean gateway (pinned to core 1, as responsa is on the rig) at ``concurrency``, both modes,
    then the mock alone at the same concurrency."""
    own: dict[str, tuple[float, float]] = {}
    with rig_mock(rig_python, "--tokens", "64", rig=rig) as upstream:
        with lean_gateway(upstream) as (url, pid):
            for mode in MODES:
                flags = ["-c", str(concurrency), "-d", str(seconds), "--pid", str(pid), "--store", "true"]
                flags += ["--stream"] if mode == "stream" else []
                runs = [rig_load(rig_python, url, *flags, rig=rig) for _ in range(repeat)]
                if any(run["errors"] for run in runs):
                    raise RuntimeError(f"the lean gateway failed requests: {runs}")
                own[mode] = (statistics.median(run["rps"] for run in runs),
                             statistics.median(run.get("server_cpu_ms_per_req") or 0 for run in runs))  # fmt: skip
        alone = {mode: statistics.median(mock_alone_rps(rig_python, upstream, mode, concurrency, seconds, rig=rig)
                                         for _ in range(repeat)) for mode in MODES}  # fmt: skip
    return [LeanRow(mode, rps, cpu, alone[mode]) for mode, (rps, cpu) in own.items()]


def main() -> None:
    if len(sys.argv) == 5 and sys.argv[1] == "--serve":
        serve(int(sys.argv[2]), sys.argv[3], sys.argv[4])
        return
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    rig_arguments(parser)
    parser.add_argument("--seconds", type=float, default=10)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    print(f"{'mode':<7} | {'lean req/s':>10} | {'mock alone':>10} | {'share':>6} | {'CPU ms/req':>10}")
    for row in measure(args.rig_python, args.rig, args.seconds, args.repeat):
        print(f"{row.mode:<7} | {row.rps:>10,.0f} | {row.mock_rps:>10,.0f} | {row.share:>6.1%} | {row.cpu_ms:>10.3f}")


if __name__ == "__main__":
    main()
