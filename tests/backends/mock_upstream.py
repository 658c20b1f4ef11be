"""A scripted OpenAI-compatible Chat Completions server for tests (a real HTTP peer on loopback).

Each ``POST /v1/chat/completions`` takes the next canned reply from ``script`` (or a default
streamed "hello" when it is empty) and records the request body and client port.
"""

from __future__ import annotations

import json
import re
import zlib
from collections import deque
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any

import anyio
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route

TINY_PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAIAAACQd1PeAAAADElEQVR4nGP4//8/AAX+Av4N70a4AAAAAElFTkSuQmCC"
"""A 1x1 PNG, base64: what the fake images model draws."""

SYNONYMS = {"automobile": "car", "vehicle": "car", "cars": "car", "physician": "doctor", "medic": "doctor"}


def meaning(text: str, dimensions: int = 64) -> list[float]:
    """A toy embedding that knows a few synonyms: words (synonyms folded together) hashed into buckets,
    so texts sharing meaning but no words are near each other, as with a real embedding model."""
    vector = [0.0] * dimensions
    for word in re.findall(r"[a-z]+", text.lower()):
        vector[zlib.crc32(SYNONYMS.get(word, word).encode()) % dimensions] += 1.0
    return vector


@dataclass
class Stream:
    """Send these chunks as SSE; ``then_break`` drops the connection instead of ``[DONE]``."""

    chunks: list[dict[str, Any]]
    then_break: bool = False
    delay: float = 0.0
    stall_after: float = 0.0
    """Seconds of silence after the chunks, before the end (an upstream that hangs mid-stream)."""


@dataclass
class Fail:
    status: int
    message: str = "upstream says no"
    headers: dict[str, str] = field(default_factory=dict)


@dataclass
class Garbage:
    """Answer 200 with this body, whatever was asked (an upstream that is not what it claims)."""

    body: bytes
    media_type: str = "text/event-stream"


@dataclass
class Stall:
    """Send nothing for ``seconds`` before answering (an upstream that hangs)."""

    seconds: float


def text_chunks(*pieces: str, usage: dict[str, Any] | None = None, finish: str = "stop") -> list[dict[str, Any]]:
    chunks: list[dict[str, Any]] = [{"choices": [{"index": 0, "delta": {"content": p}}]} for p in pieces]
    chunks.append({"choices": [{"index": 0, "delta": {}, "finish_reason": finish}]})
    chunks.append({"choices": [], "usage": usage or {"prompt_tokens": 7, "completion_tokens": len(pieces)}})
    return chunks


def call_turn(name: str, arguments: dict[str, Any], call_id: str = "call_0") -> Stream:
    """A turn that calls ``name`` with ``arguments`` (whole, in one chunk) and ends for the tool."""
    call = {
        "index": 0,
        "id": call_id,
        "type": "function",
        "function": {"name": name, "arguments": json.dumps(arguments)},
    }
    return Stream([{"choices": [{"index": 0, "delta": {"tool_calls": [call]}}]},
                   {"choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}]}])  # fmt: skip


def as_completion(chunks: list[dict[str, Any]]) -> dict[str, Any]:
    """The non-streaming ``chat.completion`` those chunks add up to."""
    message: dict[str, Any] = {"role": "assistant", "content": None}
    calls: dict[int, dict[str, Any]] = {}
    finish, usage = None, None
    for chunk in chunks:
        usage = chunk.get("usage") or usage
        for choice in chunk.get("choices") or []:
            delta = choice.get("delta") or {}
            for key in ("content", "reasoning_content", "refusal"):
                if delta.get(key):
                    message[key] = (message.get(key) or "") + delta[key]
            for call in delta.get("tool_calls") or []:
                entry = calls.setdefault(call["index"], {"id": call.get("id"), "type": "function",
                                                         "function": {"name": "", "arguments": ""}})  # fmt: skip
                entry["function"]["name"] += call.get("function", {}).get("name") or ""
                entry["function"]["arguments"] += call.get("function", {}).get("arguments") or ""
            finish = choice.get("finish_reason") or finish
    if calls:
        message["tool_calls"] = [calls[i] for i in sorted(calls)]
    return {"object": "chat.completion", "choices": [{"index": 0, "message": message, "finish_reason": finish}],
            "usage": usage}  # fmt: skip


class MockUpstream:
    def __init__(self, models: tuple[str, ...] = ("up-model",)) -> None:
        self.models = models
        self.script: deque[Stream | Fail | Garbage | Stall] = deque()
        self.requests: list[dict[str, Any]] = []
        self.client_ports: list[int] = []
        self.cookies: list[str | None] = []
        """The ``cookie`` header of each chat request (every reply sets one, as some proxies do)."""
        self.traceparents: list[str | None] = []
        self.healthy = True
        self.token_count: int | None = None
        """What ``POST /tokenize`` (vLLM's, at the root) answers; None: the route is missing (404)."""
        self.tokenize_requests: list[dict[str, Any]] = []
        self.embedding_requests: list[dict[str, Any]] = []
        self.embeddings_fail = False
        self.image_requests: list[dict[str, Any]] = []
        self.image_edits: list[dict[str, Any]] = []
        """Each ``POST /v1/images/edits``: its text fields, and ``images`` / ``mask`` as (name, bytes)."""
        self.moderation_requests: list[dict[str, Any]] = []
        self.moderation_flags: dict[str, str] = {}
        """``POST /v1/moderations``: a word, and the category an input containing it is flagged in."""
        self.images_refuse = False
        """Answer image generations with the Images API's 400 (a prompt its moderation blocks)."""
        self.app = Starlette(
            routes=[
                Route("/v1/models", self._models, methods=["GET"]),
                Route("/v1/chat/completions", self._chat, methods=["POST"]),
                Route("/tokenize", self._tokenize, methods=["POST"]),
                Route("/v1/embeddings", self._embeddings, methods=["POST"]),
                Route("/v1/images/generations", self._images, methods=["POST"]),
                Route("/v1/images/edits", self._image_edits, methods=["POST"]),
                Route("/v1/moderations", self._moderations, methods=["POST"]),
            ]
        )

    async def _embeddings(self, request: Request) -> Response:
        body = json.loads(await request.body())
        self.embedding_requests.append(body)
        if self.embeddings_fail:
            return JSONResponse({"error": {"message": "embedding service down"}}, status_code=500)
        texts = [body["input"]] if isinstance(body["input"], str) else body["input"]
        data = [{"object": "embedding", "index": i, "embedding": meaning(text)} for i, text in enumerate(texts)]
        return JSONResponse({"object": "list", "data": data, "model": body["model"]})

    async def _moderations(self, request: Request) -> Response:
        """OpenAI's moderation route: an input is flagged in the category of each word of
        ``moderation_flags`` it contains (scores 0.97, else 0.01)."""
        body = json.loads(await request.body())
        self.moderation_requests.append(body)
        results = []
        for text in [body["input"]] if isinstance(body["input"], str) else body["input"]:
            hits = {category for word, category in self.moderation_flags.items() if word in text.lower()}
            results.append({"flagged": bool(hits), "categories": {category: True for category in hits},
                            "category_scores": {category: 0.97 for category in hits}})  # fmt: skip
        return JSONResponse({"id": "modr-1", "model": body["model"], "results": results})

    async def _images(self, request: Request) -> Response:
        """The Images API's generations: one PNG, streamed with partial images when asked."""
        body = json.loads(await request.body())
        self.image_requests.append(body)
        if self.images_refuse:
            error = {"message": "Your request was rejected by the safety system.", "code": "moderation_blocked"}
            return JSONResponse({"error": error}, status_code=400)
        details = {"size": body.get("size") or "1024x1024", "quality": body.get("quality") or "low",
                   "background": "opaque", "output_format": body.get("output_format") or "png"}  # fmt: skip
        if not body.get("stream"):
            data = [{"b64_json": TINY_PNG, "revised_prompt": f"{body['prompt']}, as a watercolour"}]
            return JSONResponse({"created": 1, "data": data, **details})

        async def events() -> AsyncIterator[bytes]:
            for index in range(int(body.get("partial_images") or 0)):
                partial = {"type": "image_generation.partial_image", "b64_json": TINY_PNG, "partial_image_index": index}
                yield f"event: image_generation.partial_image\ndata: {json.dumps({**partial, **details})}\n\n".encode()
            done = {"type": "image_generation.completed", "b64_json": TINY_PNG, "created_at": 1, **details}
            yield f"event: image_generation.completed\ndata: {json.dumps(done)}\n\n".encode()

        return StreamingResponse(events(), media_type="text/event-stream")

    async def _image_edits(self, request: Request) -> Response:
        """The Images API's edits (multipart): one PNG, the images and mask it was sent kept."""
        async with request.form() as form:
            edit: dict[str, Any] = {key: value for key, value in form.multi_items() if isinstance(value, str)}
            edit["images"] = [(upload.filename, await upload.read()) for key, upload in form.multi_items()
                              if key == "image[]" and not isinstance(upload, str)]  # fmt: skip
            mask = form.get("mask")
            edit["mask"] = None if mask is None or isinstance(mask, str) else (mask.filename, await mask.read())
        self.image_edits.append(edit)
        data = [{"b64_json": TINY_PNG, "revised_prompt": f"{edit['prompt']}, edited"}]
        return JSONResponse({"created": 1, "data": data, "size": edit.get("size") or "1024x1024"})

    async def _tokenize(self, request: Request) -> Response:
        self.tokenize_requests.append(json.loads(await request.body()))
        if self.token_count is None:
            return JSONResponse({"detail": "Not Found"}, status_code=404)
        return JSONResponse({"count": self.token_count, "max_model_len": 4096, "tokens": []})

    async def _models(self, _request: Request) -> Response:
        if not self.healthy:
            return JSONResponse({"error": {"message": "down"}}, status_code=503)
        return JSONResponse({"object": "list", "data": [{"id": name, "object": "model"} for name in self.models]})

    async def _chat(self, request: Request) -> Response:
        body = json.loads(await request.body())
        self.requests.append(body)
        if request.client is not None:
            self.client_ports.append(request.client.port)
        self.cookies.append(request.headers.get("cookie"))
        self.traceparents.append(request.headers.get("traceparent"))
        reply = self.script.popleft() if self.script else Stream(text_chunks("hello", " from", " upstream"))
        if isinstance(reply, Stall):
            await anyio.sleep(reply.seconds)
            reply = Stream(text_chunks("late"))
        if isinstance(reply, Fail):
            return JSONResponse({"error": {"message": reply.message}}, status_code=reply.status, headers=reply.headers)
        if isinstance(reply, Garbage):
            return Response(reply.body, media_type=reply.media_type)
        sets_cookie = {"set-cookie": f"upstream_session=client{len(self.requests)}; Path=/"}
        if not body.get("stream"):
            if reply.then_break:
                return StreamingResponse(self._broken_json(), media_type="application/json")
            return JSONResponse(as_completion(reply.chunks), headers=sets_cookie)
        return StreamingResponse(self._frames(reply), media_type="text/event-stream", headers=sets_cookie)

    async def _broken_json(self) -> AsyncIterator[bytes]:
        yield b'{"choices": [{"mess'
        raise RuntimeError("connection dropped on purpose")

    async def _frames(self, reply: Stream) -> AsyncIterator[bytes]:
        for chunk in reply.chunks:
            if reply.delay:
                await anyio.sleep(reply.delay)
            yield f"data: {json.dumps(chunk)}\n\n".encode()
        if reply.stall_after:
            await anyio.sleep(reply.stall_after)
        if reply.then_break:
            raise RuntimeError("connection dropped on purpose")
        yield b"data: [DONE]\n\n"
