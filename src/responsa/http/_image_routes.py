"""OpenAI's Images API, drawn by the images model an upstream serves: ``POST /v1/images/generations``
and ``POST /v1/images/edits`` (see ``ImagesApi``); ``/variations`` answers a 400 that says what to use
instead, not a bare 404."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from starlette.datastructures import UploadFile
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import BaseRoute, Route

from responsa.backends import ImageFile
from responsa.engine import ImagesApi
from responsa.engine.usage import Used
from responsa.protocol import InvalidRequest

from ._errors import json_response
from ._parsing import read_json
from ._services import check_model, count_use, services

__all__ = ["image_routes"]


async def generate_images(request: Request) -> Response:
    """``images.generate``: the images as ``b64_json``."""
    body = await read_json(request)
    return _drawn(request, body, await (await _permitted(request, body)).generate(body))


async def edit_images(request: Request) -> Response:
    """``images.edit``: a multipart form, the images as ``image`` (or ``image[]``), the mask as ``mask``."""
    async with request.form() as form:
        fields = {key: value for key, value in form.multi_items() if isinstance(value, str)}
        images = [await _image(upload) for key, upload in form.multi_items()
                  if key in ("image", "image[]") and isinstance(upload, UploadFile)]  # fmt: skip
        mask = form.get("mask")
        masked = await _image(mask) if isinstance(mask, UploadFile) else None
    return _drawn(request, fields, await (await _permitted(request, fields)).edit(fields, images, masked))


async def _permitted(request: Request, body: Mapping[str, Any]) -> ImagesApi:
    """The images API, where the request's project may use the model it names (403 otherwise)."""
    images = services(request).images
    await check_model(request, images.model_of(body))
    return images


def _drawn(request: Request, body: Mapping[str, Any], reply: dict[str, Any]) -> Response:
    """The images, counted in the usage ledger."""
    count_use(request, Used("images", str(ImagesApi.model_of(body)), units=len(reply.get("data") or ())))
    return json_response(reply)


async def create_variations(request: Request) -> Response:
    """``images.create_variation``: not served (DALL·E 2's; the images models here edit and generate)."""
    raise InvalidRequest("Image variations are not served here: edit the image with a prompt instead "
                         "(POST /v1/images/edits).", param="image", code="unsupported_value")  # fmt: skip


async def _image(upload: UploadFile) -> ImageFile:
    return ImageFile(upload.filename or "image.png", await upload.read(), upload.content_type or "image/png")


def image_routes(prefix: str) -> list[BaseRoute]:
    return [
        Route(f"{prefix}/images/generations", generate_images, methods=["POST"]),
        Route(f"{prefix}/images/edits", edit_images, methods=["POST"]),
        Route(f"{prefix}/images/variations", create_variations, methods=["POST"]),
    ]
