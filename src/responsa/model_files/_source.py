"""What a model SOURCE names: a local GGUF, a URL of one, or a file in a Hugging Face repository."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Literal
from urllib.parse import urlsplit

__all__ = ["ModelSource", "is_model_file", "model_name", "parse_source"]

_HF_FILE = re.compile(r"^hf:(?P<repo>[\w.-]+/[\w.-]+)/(?P<file>.+\.gguf)$", re.IGNORECASE)
_HF_QUANT = re.compile(r"^(?:hf:)?(?P<repo>[\w.-]+/[\w.-]+)(?::(?P<quant>[\w.-]+))?$")
_SHARD = re.compile(r"-\d{5}-of-\d{5}$")


@dataclass(frozen=True)
class ModelSource:
    """One parsed SOURCE."""

    kind: Literal["path", "url", "hf"]
    text: str
    path: Path | None = None
    url: str | None = None
    repo: str | None = None
    filename: str | None = None
    """A file in ``repo``; None when the file is chosen by ``quant`` from the repository's listing."""
    quant: str | None = None
    sha256: str | None = None
    """Known in advance only for a URL ending in ``#sha256=<hex>``; a Hub file's comes from its listing."""


def model_name(filename: str) -> str:
    """A GGUF's served name (unless the user names it): its file name without the folder, ``.gguf``
    and any shard suffix, whatever the source (``Qwen2.5-0.5B-Instruct-Q4_K_M``)."""
    stem = Path(filename).name.removesuffix(".gguf").removesuffix(".GGUF")
    return _SHARD.sub("", stem)


def is_model_file(path: str) -> bool:
    """A GGUF that is a model (not a multimodal projector, ``mmproj-…``, which is never served alone)."""
    return path.lower().endswith(".gguf") and "mmproj" not in path.lower()


def parse_source(text: str) -> ModelSource:
    """Read SOURCE: an existing file, ``http(s)://…``, ``hf:owner/repo/file.gguf`` or ``owner/repo[:QUANT]``.

    Raises ``ValueError`` saying which forms are understood when ``text`` is none of them."""
    path = Path(text).expanduser()
    if path.is_file():
        return ModelSource("path", text, path=path)
    scheme = urlsplit(text).scheme
    if scheme in ("http", "https"):
        parts = urlsplit(text)
        sha256 = None
        if parts.fragment.startswith("sha256="):
            sha256 = parts.fragment.removeprefix("sha256=").lower()
            if not re.fullmatch(r"[0-9a-f]{64}", sha256):
                raise ValueError(f"{text}: #sha256= must be followed by 64 hex digits")
        return ModelSource("url", text, url=parts._replace(fragment="").geturl(), sha256=sha256)
    if found := _HF_FILE.match(text):
        return ModelSource("hf", text, repo=found["repo"], filename=found["file"])
    if (found := _HF_QUANT.match(text)) and not text.endswith(".gguf"):
        return ModelSource("hf", text, repo=found["repo"], quant=found["quant"])
    raise ValueError(
        f"{text!r} is not a model source: give a GGUF file that exists, an http(s):// URL of one, "
        "hf:owner/repo/file.gguf, or owner/repo:QUANT (e.g. bartowski/Qwen2.5-0.5B-Instruct-GGUF:Q4_K_M)"
    )
