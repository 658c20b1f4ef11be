"""Image generation, as a backend offers it (an upstream's ``POST /images/generations``): what is asked,
and what comes back (partial images while it draws, when asked, then the image)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

__all__ = ["ImageFile", "ImageRequest", "ImageUpdate"]


@dataclass(frozen=True)
class ImageRequest:
    """One image to draw: the prompt and the options of the ``image_generation`` tool."""

    prompt: str
    options: dict[str, Any] = field(default_factory=dict)
    """``size``, ``quality``, ``background``, ``output_format``, ``output_compression``, ``moderation``,
    as the Images API takes them (absent: the images model's defaults)."""
    partial_images: int = 0
    """How many partial images to stream while drawing (0 to 3)."""
    images: tuple[ImageFile, ...] = ()
    """Images to edit (the Images API's ``/images/edits``); none: a new image is drawn."""
    mask: ImageFile | None = None
    """Where an edit may paint (transparent areas of the first image's size), if given."""


@dataclass(frozen=True)
class ImageFile:
    """An image sent to an edit, as uploaded: its name, bytes and content type."""

    name: str
    data: bytes
    content_type: str = "image/png"


@dataclass(frozen=True)
class ImageUpdate:
    """A partial image (``partial_index`` set) or the final one, base64, with what the images model said."""

    b64: str
    partial_index: int | None = None
    revised_prompt: str | None = None
    details: dict[str, Any] = field(default_factory=dict)
    """``size``, ``quality``, ``background``, ``output_format`` as the images model reports them."""
