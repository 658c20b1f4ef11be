"""Files: bytes a client uploads once and refers to by id (``openai.types.FileObject``)."""

from __future__ import annotations

from typing import Literal

from ._base import WireModel

__all__ = ["FILE_PURPOSES", "FileObject"]

FILE_PURPOSES = frozenset({"assistants", "batch", "fine-tune", "vision", "user_data", "evals"})
"""What ``POST /v1/files`` accepts as ``purpose`` (OpenAI's list)."""


class FileObject(WireModel):
    id: str
    object: Literal["file"] = "file"
    bytes: int
    created_at: int
    filename: str
    purpose: str
    status: Literal["uploaded", "processed", "error"] = "processed"
    expires_at: int | None = None
    status_details: str | None = None
