"""Image generation, as a backend offers it (an upstream's ``POST /images/generations``): what is asked,
and what comes back (partial images while it draws, when asked, then the image)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

__all__ = ["ImageRequest", "ImageUpdate"]


@dataclass(frozen=True)
class ImageRequest:
    """One image to draw: the prompt and the options of the ``image_generation`` tool."""

    prompt: str
    options: dict[str, Any] = field(default_factory=dict)
    """``size``, ``quality``, ``background``, ``output_format``, ``output_compression``, ``moderation``,
    as the Images API takes them (absent: the images model's defaults)."""
    partial_images: int = 0
    """How many partial images to stream while drawing (0 to 3)."""


@dataclass(frozen=True)
class ImageUpdate:
    """A partial image (``partial_index`` set) or the final one, base64, with what the images model said."""

    b64: str
    partial_index: int | None = None
    revised_prompt: str | None = None
    details: dict[str, Any] = field(default_factory=dict)
    """``size``, ``quality``, ``background``, ``output_format`` as the images model reports them."""
