"""OpenAI's Images API: ``POST /v1/images/generations``, drawn by the images model an upstream serves
(see ``ImagesApi``); ``/v1/images/edits`` and ``/variations`` answer a 400 that says what is missing,
not a bare 404."""

from __future__ import annotations

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import BaseRoute, Route

from responsa.protocol import InvalidRequest

from ._errors import json_response
from ._parsing import read_json
from ._services import services

__all__ = ["image_routes"]


async def generate_images(request: Request) -> Response:
    """``images.generate``: the images as ``b64_json``."""
    body = await read_json(request)
    return json_response(await services(request).images.generate(body))


async def edit_images(request: Request) -> Response:
    """``images.edit`` and ``images.create_variation``: not served (the images models are reached
    through their generations only)."""
    raise InvalidRequest("Image edits and variations are not served here: only generations "
                         "(POST /v1/images/generations) reach the images models.", param="image",
                         code="unsupported_value")  # fmt: skip


def image_routes(prefix: str) -> list[BaseRoute]:
    return [
        Route(f"{prefix}/images/generations", generate_images, methods=["POST"]),
        Route(f"{prefix}/images/edits", edit_images, methods=["POST"]),
        Route(f"{prefix}/images/variations", edit_images, methods=["POST"]),
    ]
