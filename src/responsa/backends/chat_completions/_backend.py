"""OpenAI-compatible Chat Completions upstreams as a backend: pooled connections, several workers per
model, health checks, retries before the first byte, upstream errors mapped to ours."""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any

import anyio
import httpx
import orjson

from responsa.backends._base import Backend, ModelEvent, ModelRequest
from responsa.protocol import InvalidRequest, ModelError, RateLimited, ResponsaError, ServiceUnavailable

from ._decode import ChunkDecoder, completion_as_chunk
from ._translate import chat_body
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


class _Retry(Exception):
    """This worker could not take the request; another may."""

    def __init__(self, error: ResponsaError) -> None:
        self.error = error


class ChatCompletionsBackend(Backend):
    """Serves each :class:`UpstreamModel` from its worker pool, over one pooled HTTP client."""

    def __init__(
        self,
        models: Sequence[UpstreamModel],
        client: httpx.AsyncClient | None = None,
        health_interval: float = 5.0,
    ) -> None:
        self._models: dict[str, UpstreamModel] = {}
        for model in models:  # the first definition of a name wins (the model file's, before discovery)
            self._models.setdefault(model.name, model)
        self._pools = {name: WorkerPool.of(list(model.urls), model.strategy) for name, model in self._models.items()}
        limits = httpx.Limits(max_connections=1000, max_keepalive_connections=200, keepalive_expiry=60)
        timeout = httpx.Timeout(connect=5, read=600, write=30, pool=30)
        self._client = client or httpx.AsyncClient(limits=limits, timeout=timeout)
        self._health_interval = health_interval

    def models(self) -> Sequence[str]:
        return list(self._models)

    @asynccontextmanager
    async def stream(self, request: ModelRequest) -> AsyncIterator[AsyncIterator[ModelEvent]]:
        model = self._models[request.model]
        pool = self._pools[request.model]
        payload = chat_body(request, model.upstream_model or model.name)
        body = orjson.dumps(payload)
        prompt_chars = sum(len(str(message.get("content") or "")) for message in payload["messages"])
        headers = {"content-type": "application/json"}
        if model.api_key:
            headers["authorization"] = f"Bearer {model.api_key}"
        last_error: ResponsaError = ServiceUnavailable(f"No healthy worker is available for model '{model.name}'.")
        for worker in pool.candidates():
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
            logger.info("upstream %s model=%s status=%d", worker.url, model.name, response.status_code)
            decoder = ChunkDecoder(request.max_tool_calls, prompt_chars)
            try:
                yield _events(response, decoder) if request.streaming else _whole(response, decoder)
            finally:
                worker.in_flight -= 1
                await response.aclose()
            return
        raise last_error

    async def _open(self, worker: Worker, body: bytes, headers: dict[str, str]) -> httpx.Response:
        """Send the request and read the status; raise :class:`_Retry` where another worker may do better."""
        request = self._client.build_request("POST", f"{worker.url}/chat/completions", content=body, headers=headers)
        try:
            response = await self._client.send(request, stream=True)
        except httpx.TransportError as exc:
            worker.mark_down()
            logger.warning("upstream %s unreachable: %s", worker.url, exc)
            raise _Retry(ServiceUnavailable(f"Upstream {worker.url} is unreachable.")) from exc
        if response.status_code == 200:
            return response
        detail = await _error_detail(response)
        await response.aclose()
        status = response.status_code
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
            async with anyio.create_task_group() as group:
                for pool in self._pools.values():
                    for worker in pool.workers:
                        group.start_soon(self._probe, worker)
            await anyio.sleep(self._health_interval)

    async def _probe(self, worker: Worker) -> None:
        try:
            reply = await self._client.get(f"{worker.url}/models", timeout=self._health_interval)
            healthy = reply.status_code == 200
        except httpx.HTTPError:
            healthy = False
        if healthy and not worker.healthy:
            logger.info("upstream %s is healthy again", worker.url)
            worker.mark_up()
        elif not healthy and worker.healthy:
            logger.warning("upstream %s failed its health check", worker.url)
            worker.mark_down()

    def health(self) -> dict[str, bool]:
        """Each worker URL and whether it is taking requests."""
        return {worker.url: worker.healthy for pool in self._pools.values() for worker in pool.workers}

    async def aclose(self) -> None:
        await self._client.aclose()


async def _events(response: httpx.Response, decoder: ChunkDecoder) -> AsyncIterator[ModelEvent]:
    done = False
    try:
        # Read to the end even after [DONE], so the connection goes back to the pool.
        async for line in response.aiter_lines():
            if done or not line.startswith("data:"):
                continue
            data = line[5:].strip()
            if data == "[DONE]":
                done = True
                continue
            chunk: dict[str, Any] = orjson.loads(data)
            if "error" in chunk:
                raise ModelError(f"The upstream failed mid-stream: {_message(chunk)}")
            for event in decoder.feed(chunk):
                yield event
    except (httpx.HTTPError, orjson.JSONDecodeError) as exc:
        raise ModelError(f"The upstream stream broke: {exc}") from exc
    for event in decoder.finish():
        yield event


async def _whole(response: httpx.Response, decoder: ChunkDecoder) -> AsyncIterator[ModelEvent]:
    try:
        completion = orjson.loads(await response.aread())
    except (httpx.HTTPError, orjson.JSONDecodeError) as exc:
        raise ModelError(f"The upstream reply broke: {exc}") from exc
    for event in [*decoder.feed(completion_as_chunk(completion)), *decoder.finish()]:
        yield event


async def _error_detail(response: httpx.Response) -> str:
    raw = await response.aread()
    try:
        return _message(orjson.loads(raw))
    except orjson.JSONDecodeError:
        return raw.decode(errors="replace")[:500] or response.reason_phrase


def _message(body: Any) -> str:
    if isinstance(body, dict):
        error = body.get("error", body)
        if isinstance(error, dict):
            return str(error.get("message") or error)
        return str(error)
    return str(body)
