"""The least a Python gateway can add to a stream: one hop and nothing else, the floor against which
responsa's added time to first token is read (bench/ttft_overhead.py).

An aiohttp server (uvloop) that forwards ``POST /v1/responses`` to the upstream's streaming Chat
Completions and writes, for each content chunk, a ``response.output_text.delta`` frame, then
``response.completed``: no validation, no ids, no store, no events but those the rig's load.py
reads. Runs under the rig's Python (aiohttp, uvloop and orjson, as its mock does).

    python bench/bare_hop.py PORT UPSTREAM_V1_URL
"""

from __future__ import annotations

import asyncio
import sys

import orjson
import uvloop
from aiohttp import ClientSession, TCPConnector, web

_CREATED = b'event: response.created\ndata: {"type":"response.created","response":{"id":"resp_bare"}}\n\n'
_COMPLETED = b'event: response.completed\ndata: {"type":"response.completed"}\n\n'


async def _forward(request: web.Request) -> web.StreamResponse:
    body = orjson.loads(await request.read())
    chat = {"model": body["model"], "messages": [{"role": "user", "content": body["input"]}], "stream": True,
            "max_tokens": body.get("max_output_tokens")}  # fmt: skip
    reply = web.StreamResponse(headers={"content-type": "text/event-stream"})
    await reply.prepare(request)
    await reply.write(_CREATED)
    session: ClientSession = request.app["upstream"]
    async with session.post(request.app["url"] + "/chat/completions", data=orjson.dumps(chat),
                            headers={"content-type": "application/json"}) as upstream:  # fmt: skip
        async for line in upstream.content:
            if line.startswith(b"data: {"):
                delta = (orjson.loads(line[6:]).get("choices") or [{}])[0].get("delta", {}).get("content")
                if delta:
                    event = {"type": "response.output_text.delta", "delta": delta}
                    await reply.write(b"event: response.output_text.delta\ndata: " + orjson.dumps(event) + b"\n\n")
    await reply.write(_COMPLETED)
    return reply


async def _serve(port: int, upstream: str) -> None:
    app = web.Application()
    app.router.add_post("/v1/responses", _forward)
    app.router.add_get("/health", lambda _: web.Response(text="ok"))
    app["url"] = upstream
    app["upstream"] = ClientSession(connector=TCPConnector(limit=0))
    runner = web.AppRunner(app, access_log=None)
    await runner.setup()
    await web.TCPSite(runner, "127.0.0.1", port).start()
    await asyncio.Event().wait()


if __name__ == "__main__":
    uvloop.run(_serve(int(sys.argv[1]), sys.argv[2]))
