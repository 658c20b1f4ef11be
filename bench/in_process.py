"""The server's own CPU per request, in process: the ASGI app (gate, routing, engine, SQLite store) called
straight, against a canned Chat Completions answer instead of the upstream client. No HTTP server, no
aiohttp, no other process on the core: what is left is responsa's own work, steadier than the rig and
able to run under a profiler. The rig's mock still answers the start-up's model discovery.

    python bench/in_process.py --rig-python /tmp/rig/bin/python [--stream] [--tokens 64] [--requests 4000] [--profile]

Prints CPU µs a request (``time.process_time``, all threads). ``--profile`` prints cProfile's top
entries (which inflate each Python call's cost; compare shares, not times). For a count that does not
drift with the machine, run it twice under ``valgrind --tool=callgrind`` with two ``--requests`` and
divide the difference of the totals by the difference of the requests (that is how the fixed paths'
table was found: the endpoint called straight from the gate saved 3.6% of a JSON create's).
"""

from __future__ import annotations

import argparse
import asyncio
import cProfile
import gc
import pstats
import tempfile
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import orjson
import uvloop
from _server import RIG, rig_mock

from responsa.backends import ModelRequest
from responsa.backends.chat_completions import _backend
from responsa.backends.chat_completions._decode import ChunkDecoder, completion_as_chunk
from responsa.backends.chat_completions._translate import chat_body
from responsa.config import Settings
from responsa.serve import create_app

Message = dict[str, Any]
Send = Callable[[Message], Awaitable[None]]


def _canned(tokens: int) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """A completion of ``tokens`` words, and the same as stream chunks (the last with usage)."""
    words = [f"w{index} " for index in range(tokens)]
    usage = {"prompt_tokens": 10, "completion_tokens": tokens, "total_tokens": tokens + 10}
    head = {"id": "c", "created": 0, "model": "m"}
    message = {"role": "assistant", "content": "".join(words)}
    completion = {**head, "object": "chat.completion", "usage": usage,
                  "choices": [{"index": 0, "message": message, "finish_reason": "stop"}]}  # fmt: skip
    chunks = [
        {**head, "object": "chat.completion.chunk", "choices": [{"index": 0, "delta": {"content": word}}]}
        for word in words
    ]
    chunks.append({**head, "object": "chat.completion.chunk", "usage": usage,
                   "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]})  # fmt: skip
    return completion, chunks


def answer_canned(tokens: int) -> None:
    """Make every upstream model answer from the canned completion: the request is still translated
    and encoded, and each chunk encoded and parsed (as from the network), in three reads a stream."""
    completion, chunks = _canned(tokens)

    @asynccontextmanager
    async def stream(self: Any, request: ModelRequest) -> AsyncIterator[AsyncIterator[list[Any]]]:
        model = self._models[request.model]
        payload = chat_body(request, model.upstream_model or model.name)
        orjson.dumps(payload)
        decoder = ChunkDecoder(request.max_tool_calls, payload["messages"])

        async def whole() -> AsyncIterator[list[Any]]:
            yield [*decoder.feed(completion_as_chunk(orjson.loads(orjson.dumps(completion)))), *decoder.finish()]

        async def reads() -> AsyncIterator[list[Any]]:
            third = len(chunks) // 3
            for part in (chunks[:third], chunks[third : 2 * third], chunks[2 * third :]):
                await asyncio.sleep(0)
                batch = [event for chunk in part for event in decoder.feed(orjson.loads(orjson.dumps(chunk)))]
                yield batch + (decoder.finish() if part[-1] is chunks[-1] else [])

        yield reads() if request.streaming else whole()

    _backend.ChatCompletionsBackend.stream = stream  # type: ignore[method-assign]


@asynccontextmanager
async def served_app(upstream: str) -> AsyncIterator[Any]:
    """The app over a fresh SQLite store and the rig's upstream, its lifespan started for the block."""
    with tempfile.TemporaryDirectory() as tmp:
        settings = Settings(db_url=f"sqlite:///{tmp}/b.db", embedded=False, simulator=False, upstreams=(upstream,))
        app = create_app(settings)
        lifespan: asyncio.Queue[Message] = asyncio.Queue()
        started: asyncio.Queue[Message] = asyncio.Queue()
        await lifespan.put({"type": "lifespan.startup"})
        serving = asyncio.create_task(app({"type": "lifespan", "asgi": {"version": "3.0"}, "state": {}},
                                          lifespan.get, started.put))  # fmt: skip
        await started.get()
        try:
            yield app
        finally:
            await lifespan.put({"type": "lifespan.shutdown"})
            await started.get()
            await serving


async def run(args: argparse.Namespace, upstream: str) -> None:
    async with served_app(upstream) as app:
        body = orjson.dumps({"model": "mock-model", "input": "Hello there, how are you today?",
                             "stream": args.stream, "max_output_tokens": args.tokens})  # fmt: skip

        async def one() -> None:
            await _create(app, body)

        async def requests(count: int) -> None:
            for _ in range(count // args.concurrency):
                await asyncio.gather(*(one() for _ in range(args.concurrency)))

        await requests(400)  # warm
        gc.collect()
        gc.freeze()
        gc.set_threshold(50_000, 20, 20)  # as the server sets it (cli.py)
        profile = cProfile.Profile() if args.profile else None
        cpu = time.process_time()
        if profile is not None:
            profile.enable()
        await requests(args.requests)
        if profile is not None:
            profile.disable()
        cpu = time.process_time() - cpu
        print(f"{'stream' if args.stream else 'json'}: {cpu / args.requests * 1e6:.1f} µs of CPU a request "
              f"({args.requests} requests, {args.concurrency} at a time, {args.tokens} tokens)")  # fmt: skip
        if profile is not None:
            pstats.Stats(profile).sort_stats(args.sort).print_stats(args.top)


async def _create(app: Any, body: bytes) -> None:
    """One ``POST /v1/responses`` through the ASGI app; a status other than 200 stops the script."""
    scope = {"type": "http", "asgi": {"version": "3.0", "spec_version": "2.3"}, "http_version": "1.1",
             "method": "POST", "scheme": "http", "path": "/v1/responses", "raw_path": b"/v1/responses",
             "query_string": b"", "root_path": "", "client": ("127.0.0.1", 5000), "server": ("127.0.0.1", 8080),
             "headers": [(b"host", b"127.0.0.1:8080"), (b"content-type", b"application/json"),
                         (b"content-length", str(len(body)).encode())]}  # fmt: skip
    delivered = False

    async def receive() -> Message:
        nonlocal delivered
        if not delivered:
            delivered = True
            return {"type": "http.request", "body": body, "more_body": False}
        await asyncio.Event().wait()  # the client never leaves
        raise AssertionError("unreachable")

    status: list[int] = []
    answer: list[bytes] = []

    async def send(message: Message) -> None:
        if message["type"] == "http.response.start":
            status.append(message["status"])
        elif message["type"] == "http.response.body":
            answer.append(message.get("body", b""))

    await app(scope, receive, send)
    if status != [200]:
        raise SystemExit(f"{status}: {b''.join(answer)[:500]!r}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rig", type=str, default=str(RIG))
    parser.add_argument("--rig-python", required=True)
    parser.add_argument("--stream", action="store_true")
    parser.add_argument("--tokens", type=int, default=64)
    parser.add_argument("--requests", type=int, default=4000)
    parser.add_argument("--concurrency", type=int, default=16)
    parser.add_argument("--profile", action="store_true")
    parser.add_argument("--sort", default="cumulative")
    parser.add_argument("--top", type=int, default=60)
    args = parser.parse_args()
    answer_canned(args.tokens)
    with rig_mock(args.rig_python, rig=Path(args.rig)) as upstream:
        uvloop.run(run(args, upstream))


if __name__ == "__main__":
    main()
