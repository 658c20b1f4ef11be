"""Image generation through an upstream's Images API (``POST /v1/images/generations``, or
``/images/edits`` with the images to edit, as multipart): one JSON answer, or, when partial images are
asked for, server-sent ``image_generation.partial_image`` and ``image_generation.completed`` events."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterable
from typing import TYPE_CHECKING, Any

import aiohttp
import orjson

from responsa.backends._images import ImageRequest, ImageUpdate
from responsa.protocol import InvalidRequest, ModelError, ResponsaError

from ._workers import Worker

if TYPE_CHECKING:
    from ._backend import UpstreamModel

__all__ = ["draw"]

_DETAILS = ("size", "quality", "background", "output_format")


async def draw(
    session: aiohttp.ClientSession, workers: Iterable[Worker], served: UpstreamModel, request: ImageRequest
) -> AsyncIterator[ImageUpdate]:
    """Try the workers in turn until one answers; an upstream's refusal (a 4xx) is the caller's error."""
    body: dict[str, Any] = {"model": served.upstream_model or served.name, "prompt": request.prompt, "n": 1,
                            **request.options}  # fmt: skip
    if request.partial_images:
        body |= {"stream": True, "partial_images": request.partial_images}
    headers = {"authorization": f"Bearer {served.api_key}"} if served.api_key else {}
    endpoint = "edits" if request.images else "generations"
    failure = "no healthy worker"
    for worker in workers:
        try:
            sent = {"data": _form(body, request)} if request.images else {"json": body}
            async with session.post(f"{worker.url}/images/{endpoint}", headers=headers, **sent) as reply:
                if reply.status == 200:
                    async for update in _updates(reply, bool(request.partial_images)):
                        yield update
                    return
                text = await reply.text()
                if 400 <= reply.status < 500:
                    raise _refusal(text, reply.status)
                failure = f"status {reply.status}: {text[:200]}"
        except (aiohttp.ClientError, TimeoutError, ValueError, KeyError) as exc:
            failure = repr(exc)
    raise ModelError(f"The upstream could not generate an image with '{served.name}': {failure}")


def _form(body: dict[str, Any], request: ImageRequest) -> aiohttp.FormData:
    """An edit's multipart body: the fields, each image as ``image[]``, the mask."""
    form = aiohttp.FormData()
    for key, value in body.items():
        form.add_field(key, str(value).lower() if isinstance(value, bool) else str(value))
    for image in request.images:
        form.add_field("image[]", image.data, filename=image.name, content_type=image.content_type)
    if request.mask is not None:
        mask = request.mask
        form.add_field("mask", mask.data, filename=mask.name, content_type=mask.content_type)
    return form


async def _updates(reply: aiohttp.ClientResponse, streamed: bool) -> AsyncIterator[ImageUpdate]:
    """The Images API's answer: one JSON object, or server-sent ``image_generation.partial_image`` and
    ``image_generation.completed`` events."""
    if not streamed:
        data = await reply.json()
        first = data["data"][0]
        details = {key: data[key] for key in _DETAILS if data.get(key) is not None}
        yield ImageUpdate(first["b64_json"], revised_prompt=first.get("revised_prompt"), details=details)
        return
    async for raw in reply.content:
        line = raw.decode("utf-8", errors="replace").strip()
        if not line.startswith("data:") or line == "data: [DONE]":
            continue
        event = orjson.loads(line.removeprefix("data:").strip())
        details = {key: event[key] for key in _DETAILS if event.get(key) is not None}
        if event.get("type") == "image_generation.partial_image":
            yield ImageUpdate(
                event["b64_json"], partial_index=int(event.get("partial_image_index", 0)), details=details
            )
        elif event.get("type") == "image_generation.completed":
            yield ImageUpdate(event["b64_json"], revised_prompt=event.get("revised_prompt"), details=details)


def _refusal(text: str, status: int) -> ResponsaError:
    """An upstream's 4xx for an image: its error's message and code, as a request error."""
    try:
        error = orjson.loads(text).get("error") or {}
    except (orjson.JSONDecodeError, AttributeError):
        error = {}
    message = str(error.get("message") or f"The images model refused the request (status {status}).")
    return InvalidRequest(message, code=str(error.get("code") or "image_generation_refused"))
