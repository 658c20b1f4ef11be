"""OpenAI-compatible Chat Completions upstreams as a backend: pooled connections, several workers per
model, health checks, retries before the first byte, upstream errors mapped to ours.

The HTTP client is aiohttp: under load httpx spent a fifth of the gateway's CPU choosing a pooled
connection (it polls every idle socket on each request); aiohttp's pool does not.
"""

from __future__ import annotations

import logging
import time
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any

import aiohttp
import anyio
import orjson

from responsa import tracing
from responsa.backends._base import Backend, ModelEvent, ModelRequest, WorkerState, estimate_tokens
from responsa.backends._images import ImageRequest, ImageUpdate
from responsa.backends._moderation import ModerationVerdict
from responsa.protocol import (
    LONG_CONTEXT,
    Capability,
    InvalidRequest,
    ModelError,
    RateLimited,
    ResponsaError,
    ServiceUnavailable,
)

from ._decode import ChunkDecoder, completion_as_chunk
from ._images import draw
from ._memo import TranslationMemo
from ._moderation import moderate
from ._text_chunks import TextChunks
from ._translate import chat_body, chat_request
from ._workers import Strategy, Worker, WorkerPool

__all__ = ["ChatCompletionsBackend", "UpstreamModel"]

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class UpstreamModel:
    """A model name clients use, and where and as what it is served."""

    name: str
    urls: tuple[str, ...]
    upstream_model: str | None = None
    api_key: str | None = None
    strategy: Strategy = "least_busy"
    context_window: int | None = None
    """Tokens the model reads and writes in one turn, from the model registry (for ``truncation: auto``)."""
    vision: bool = True
    """Whether the model reads images; ``vision = false`` in the registry makes ``input_image`` a 400."""
    moderation: str | None = None
    """``openai``: a moderation model behind ``POST /moderations``; ``guard``: a guard model (Llama Guard)
    answering ``safe`` or ``unsafe`` and its hazard codes by Chat Completions. Either moderates only."""


class _Retry(Exception):
    """This worker could not take the request; another may."""

    def __init__(self, error: ResponsaError) -> None:
        self.error = error


class ChatCompletionsBackend(Backend):
    """Serves each :class:`UpstreamModel` from its worker pool, over one pooled HTTP client."""

    def __init__(
        self,
        models: Sequence[UpstreamModel],
        health_interval: float = 5.0,
        read_timeout: float = 300.0,
    ) -> None:
        self._models: dict[str, UpstreamModel] = {}
        for model in models:  # the first definition of a name wins (the model file's, before discovery)
            self._models.setdefault(model.name, model)
        self._pools = {name: WorkerPool.of(list(model.urls), model.strategy) for name, model in self._models.items()}
        self._client: aiohttp.ClientSession | None = None
        self._health_interval = health_interval
        self._read_timeout = read_timeout
        self._translated = TranslationMemo()
        """Chat messages of long contexts, for their next turn."""

    def _session(self) -> aiohttp.ClientSession:
        """The pooled client, made on first use (it belongs to the running event loop)."""
        if self._client is None:
            connector = aiohttp.TCPConnector(limit=1000, keepalive_timeout=60)
            timeout = aiohttp.ClientTimeout(connect=5, sock_read=self._read_timeout)
            # No cookie jar: a cookie an upstream sets must not follow one client's request into another's.
            jar = aiohttp.DummyCookieJar()
            self._client = aiohttp.ClientSession(connector=connector, timeout=timeout, cookie_jar=jar)
        return self._client

    def reads_images(self, model: str) -> bool:
        upstream = self._models.get(model)
        return upstream.vision if upstream is not None else True

    def context_window(self, model: str) -> int | None:
        upstream = self._models.get(model)
        return upstream.context_window if upstream is not None else None

    def models(self) -> Sequence[str]:
        return [name for name, model in self._models.items() if model.moderation is None]

    def moderation_models(self) -> Sequence[str]:
        return [name for name, model in self._models.items() if model.moderation is not None]

    async def moderate(self, model: str, texts: Sequence[str]) -> list[ModerationVerdict]:
        """By the upstream's moderation model, on its healthy workers in turn (see ``_moderation``)."""
        served = self._models[model]
        return await moderate(self._session(), self._pools[model].candidates(), served, texts)

    @asynccontextmanager
    async def stream(self, request: ModelRequest) -> AsyncIterator[AsyncIterator[list[ModelEvent]]]:
        model = self._models[request.model]
        pool = self._pools[request.model]
        memo = self._translated if len(request.items) >= LONG_CONTEXT else None
        payload, body = chat_request(request, model.upstream_model or model.name, memo)
        headers = {"content-type": "application/json"}
        if model.api_key:
            headers["authorization"] = f"Bearer {model.api_key}"
        tracing.inject(headers)  # the upstream's spans join this model call's trace
        last_error: ResponsaError | None = None
        for worker in pool.candidates(request.cache_key if request.reuse_prefix else None):
            worker.in_flight += 1
            try:
                response = await self._open(worker, body, headers)
            except _Retry as retry:
                worker.in_flight -= 1
                last_error = retry.error
                continue
            except BaseException:
                worker.in_flight -= 1
                raise
            logger.info("upstream %s model=%s status=%d", worker.url, model.name, response.status)
            decoder = ChunkDecoder(request.max_tool_calls, payload["messages"])
            try:
                yield _events(response, decoder) if request.streaming else _whole(response, decoder)
            finally:
                worker.in_flight -= 1
                response.release()  # back to the pool if read to the end, else closed
            return
        raise last_error or ServiceUnavailable(f"No healthy worker is available for model '{model.name}'.")

    async def count_tokens(self, request: ModelRequest) -> int:
        """By the upstream's own tokenizer where it has one (vLLM's and SGLang's ``POST /tokenize``, at
        the server's root, with the chat messages); else the estimate every backend has."""
        model = self._models[request.model]
        payload = chat_body(request, model.upstream_model or model.name)
        body = {"model": payload["model"], "messages": payload["messages"]}
        if "tools" in payload:
            body["tools"] = payload["tools"]
        headers = {"authorization": f"Bearer {model.api_key}"} if model.api_key else {}
        for worker in self._pools[request.model].candidates():
            root = worker.url.removesuffix("/").removesuffix("/v1")
            try:
                async with self._session().post(f"{root}/tokenize", json=body, headers=headers) as reply:
                    if reply.status == 200:
                        count = (await reply.json()).get("count")
                        if isinstance(count, int):
                            return count
                break  # it answered without a count: the other workers run the same server
            except (aiohttp.ClientError, ValueError) as exc:
                logger.info("upstream %s: no token count (%r)", worker.url, exc)
        return estimate_tokens(request)

    async def embed(self, model: str, texts: Sequence[str]) -> list[list[float]]:
        """The upstream's ``POST /v1/embeddings``, trying its healthy workers in turn."""
        served = self._models[model]
        body = {"model": served.upstream_model or served.name, "input": list(texts)}
        headers = {"authorization": f"Bearer {served.api_key}"} if served.api_key else {}
        failure = "no healthy worker"
        for worker in self._pools[model].candidates():
            try:
                async with self._session().post(f"{worker.url}/embeddings", json=body, headers=headers) as reply:
                    if reply.status == 200:
                        data = sorted((await reply.json())["data"], key=lambda entry: entry["index"])
                        return [list(map(float, entry["embedding"])) for entry in data]
                    failure = f"status {reply.status}: {(await reply.text())[:200]}"
            except (aiohttp.ClientError, TimeoutError, ValueError, KeyError) as exc:
                failure = repr(exc)
        raise ModelError(f"The upstream could not embed for '{model}': {failure}")

    def draws(self, model: str) -> bool:
        """A model an upstream lists is taken to be an images model when a tool names it as one."""
        return model in self._models

    async def generate_image(self, model: str, request: ImageRequest) -> AsyncIterator[ImageUpdate]:
        """The upstream's ``POST /v1/images/generations`` (see ``_images``), on its healthy workers."""
        async for update in draw(self._session(), self._pools[model].candidates(), self._models[model], request):
            yield update

    async def _open(self, worker: Worker, body: bytes, headers: dict[str, str]) -> aiohttp.ClientResponse:
        """Send the request and read the status; raise :class:`_Retry` where another worker may do better."""
        try:
            response = await self._session().post(f"{worker.url}/chat/completions", data=body, headers=headers)
        except (aiohttp.ClientError, TimeoutError) as exc:
            worker.mark_down()
            logger.warning("upstream %s unreachable: %r", worker.url, exc)
            why = (
                f"did not answer within {self._read_timeout:g}s" if isinstance(exc, TimeoutError) else "is unreachable"
            )
            raise _Retry(ServiceUnavailable(f"Upstream {worker.url} {why}.")) from exc
        if response.status == 200:
            return response
        detail = await _error_detail(response)
        response.release()
        status = response.status
        if status == 429:
            retry_after = response.headers.get("retry-after")
            raise _Retry(RateLimited(detail, headers={"retry-after": retry_after} if retry_after else None))
        if status >= 500:
            if status in (502, 503, 504):  # the worker itself is unwell; a plain 500 may be this request's
                worker.mark_down()
            raise _Retry(ServiceUnavailable(f"Upstream {worker.url} failed ({status}): {detail}"))
        if status in (401, 403):
            raise ModelError(f"The upstream refused our credentials ({status}): {detail}", code="upstream_auth")
        raise InvalidRequest(f"The upstream rejected the request: {detail}", code="upstream_error")

    async def monitor(self) -> None:
        """Probe every worker's ``/models`` each ``health_interval``, marking it up or down."""
        while True:
            await self._probe_all()
            await anyio.sleep(self._health_interval)

    async def _probe_all(self) -> None:
        async with anyio.create_task_group() as group:
            for pool in self._pools.values():
                for worker in pool.workers:
                    group.start_soon(self._probe, worker)

    async def _probe(self, worker: Worker) -> None:
        timeout = aiohttp.ClientTimeout(total=self._health_interval)
        started = time.perf_counter()
        try:
            async with self._session().get(f"{worker.url}/models", timeout=timeout) as reply:
                healthy = reply.status == 200
        except (aiohttp.ClientError, TimeoutError):
            healthy = False
        worker.latency = time.perf_counter() - started
        if healthy and not worker.healthy:
            logger.info("upstream %s is healthy again", worker.url)
            worker.mark_up()
        elif not healthy and worker.healthy:
            logger.warning("upstream %s failed its health check", worker.url)
            worker.mark_down()

    async def capabilities(self) -> list[Capability]:
        """The upstream servers, as a health check of each finds them now (each is checked again all along)."""
        await self._probe_all()
        workers = self.workers()
        healthy = sum(worker.healthy for worker in workers)
        urls = ", ".join(sorted({worker.url for worker in workers}))
        detail = f"{healthy} of {len(workers)} upstream workers answer ({urls}); each is checked again all along"
        fix = None if healthy else "start the upstream servers (or correct --upstream / the model file)"
        return [Capability("upstreams", healthy > 0, detail, fix, default=False)]

    def workers(self) -> list[WorkerState]:
        """Each worker: whether it is taking requests, its requests in flight, its last probe's latency."""
        return [
            WorkerState(model, worker.url, worker.healthy, worker.in_flight, _ms(worker.latency))
            for model, pool in self._pools.items()
            for worker in pool.workers
        ]

    async def aclose(self) -> None:
        if self._client is not None:
            await self._client.close()


def _ms(seconds: float | None) -> float | None:
    return None if seconds is None else round(seconds * 1000, 2)


async def _events(response: aiohttp.ClientResponse, decoder: ChunkDecoder) -> AsyncIterator[list[ModelEvent]]:
    """The events of each network read as one batch: however many tokens a read holds, the rest of
    the pipeline handles them in one go. The read that brings ``[DONE]`` also brings the end (usage,
    finish reason): the turn's closing events go out with its last tokens, not in a write of their own."""
    done = False
    shape = TextChunks()
    try:
        # Read to the end even after [DONE], so the connection goes back to the pool.
        rest = b""
        async for received in response.content.iter_any():
            if done:
                continue
            *lines, rest = (rest + received).split(b"\n")
            batch, done, failure = _read(lines, decoder, shape)
            if batch:
                yield batch
            if failure is not None:  # after what came before it in the same read
                raise failure
    except TimeoutError as exc:
        if not done:  # after [DONE] nothing is missing: the connection is closed, not reused
            raise _silent() from exc
    except aiohttp.ClientError as exc:
        if not done:
            raise ModelError(f"The upstream stream broke: {exc}") from exc
    except _MALFORMED as exc:
        raise ModelError(f"The upstream sent a malformed chunk: {exc!r}", code="upstream_malformed") from exc
    if not done:  # an upstream that ends without [DONE]
        yield decoder.finish()


def _read(
    lines: list[bytes], decoder: ChunkDecoder, shape: TextChunks
) -> tuple[list[ModelEvent], bool, ModelError | None]:
    """The events of one read's whole lines; whether ``[DONE]`` was among them; the error the upstream
    sent instead of a chunk, if it did (the events before it still count)."""
    batch: list[ModelEvent] = []
    for line in lines:
        if not line.startswith(b"data:"):
            continue
        payload = line[5:]
        text = shape.text(payload)
        if text is not None:  # most chunks: the learnt bytes around a token's text
            batch += decoder.text(shape.field, text)
            continue
        data = payload.strip()
        if data == b"[DONE]":
            return [*batch, *decoder.finish()], True, None
        chunk: dict[str, Any] = orjson.loads(data)
        if "error" in chunk:
            return batch, False, ModelError(f"The upstream failed mid-stream: {_message(chunk)}")
        batch += decoder.feed(chunk)
        shape.learn(payload, chunk)
    return batch, False, None


async def _whole(response: aiohttp.ClientResponse, decoder: ChunkDecoder) -> AsyncIterator[list[ModelEvent]]:
    try:
        completion = orjson.loads(await response.read())
        events = [*decoder.feed(completion_as_chunk(completion)), *decoder.finish()]
    except TimeoutError as exc:
        raise _silent() from exc
    except aiohttp.ClientError as exc:
        raise ModelError(f"The upstream reply broke: {exc}") from exc
    except _MALFORMED as exc:
        raise ModelError(f"The upstream sent a malformed reply: {exc!r}", code="upstream_malformed") from exc
    yield events


_MALFORMED = (ValueError, TypeError, KeyError, AttributeError, IndexError)
"""What decoding raises on a body that is not JSON, or not a Chat Completions chunk (``orjson``'s
errors are ``ValueError``s)."""


def _silent() -> ModelError:
    return ModelError("The upstream sent nothing for longer than --upstream-timeout-secs.", code="upstream_timeout")


async def _error_detail(response: aiohttp.ClientResponse) -> str:
    try:
        raw = await response.read()
    except (aiohttp.ClientError, TimeoutError):
        raw = b""
    try:
        return _message(orjson.loads(raw))
    except orjson.JSONDecodeError:
        return raw.decode(errors="replace")[:500] or response.reason or ""


def _message(body: Any) -> str:
    if isinstance(body, dict):
        error = body.get("error", body)
        if isinstance(error, dict):
            return str(error.get("message") or error)
        return str(error)
    return str(body)
