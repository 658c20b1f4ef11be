"""Images in a request's input: refused by models that cannot read them, and checked for being images.

A model that cannot see an image must not answer as if it had (the silent wrong answer); image
data that is not an image is the client's mistake. Both are 400s naming the content part.
"""

from __future__ import annotations

import base64
import binascii
import re
from collections.abc import Sequence

from responsa.protocol import InputImage, InvalidRequest, Item, Message

__all__ = ["IMAGE_TYPES", "check_images"]

IMAGE_TYPES = {
    "image/png": (b"\x89PNG\r\n\x1a\n",),
    "image/jpeg": (b"\xff\xd8\xff",),
    "image/gif": (b"GIF87a", b"GIF89a"),
    "image/webp": (b"RIFF",),
}
"""The image types the API takes, with the bytes each file starts with."""

_DATA_URL = re.compile(r"data:(?P<mime>[^;,]*)(?P<base64>;base64)?,(?P<data>.*)", re.DOTALL)


def check_images(items: Sequence[Item], reads_images: bool, model: str) -> None:
    """400 for an ``input_image`` in ``items`` (the request's input) that ``model`` cannot read, or
    whose data is not a PNG, JPEG, GIF or WEBP image."""
    for index, item in enumerate(items):
        if not isinstance(item, Message) or isinstance(item.content, str):
            continue
        for part_index, part in enumerate(item.content):
            if isinstance(part, InputImage):
                where = f"input[{index}].content[{part_index}]"
                if not reads_images:
                    raise InvalidRequest(
                        f"Model '{model}' cannot read images: remove the input_image or choose a model that can.",
                        param=where,
                        code="unsupported_value",
                    )
                _check_image(part, where)


def _check_image(part: InputImage, where: str) -> None:
    url = part.image_url
    if url is None:
        if part.file_id is None:
            raise InvalidRequest("An input_image needs 'image_url' or 'file_id'.", param=where)
        return
    if url.startswith(("http://", "https://")):
        return  # fetched by the model's server, which says whether it is an image
    match = _DATA_URL.fullmatch(url)
    if match is None:
        raise InvalidRequest(
            "Invalid 'image_url': expected an http(s) URL or a base64 data URL.",
            param=f"{where}.image_url",
            code="invalid_image_url",
        )
    mime = match["mime"].lower()
    if mime not in IMAGE_TYPES:
        raise InvalidRequest(
            f"Unsupported image type {mime or '(none)'!r}: use image/png, image/jpeg, image/gif or image/webp.",
            param=f"{where}.image_url",
            code="invalid_image_format",
        )
    try:
        data = base64.b64decode(match["data"], validate=True) if match["base64"] else b""
    except (binascii.Error, ValueError):
        data = b""
    if not data.startswith(IMAGE_TYPES[mime]) or (mime == "image/webp" and data[8:12] != b"WEBP"):
        raise InvalidRequest(
            f"The image data is not valid base64 of a {mime} image.",
            param=f"{where}.image_url",
            code="invalid_image",
        )
