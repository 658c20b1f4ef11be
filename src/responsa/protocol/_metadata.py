"""The limits OpenAI puts on ``metadata``: 16 keys, keys ≤ 64 characters, values ≤ 512."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Annotated, TypeVar

from pydantic import AfterValidator

__all__ = ["MAX_METADATA_KEYS", "Metadata", "MetadataPatch", "check_metadata"]

MAX_METADATA_KEYS = 16
MAX_METADATA_KEY_CHARS = 64
MAX_METADATA_VALUE_CHARS = 512


Checked = TypeVar("Checked", bound=Mapping[str, str | None])


def check_metadata(metadata: Checked) -> Checked:
    """``metadata`` itself, or ``ValueError`` (a pydantic validation message) when a limit is broken."""
    if len(metadata) > MAX_METADATA_KEYS:
        raise ValueError(f"metadata may have at most {MAX_METADATA_KEYS} keys")
    for key, text in metadata.items():
        if len(key) > MAX_METADATA_KEY_CHARS:
            raise ValueError(f"metadata keys may be at most {MAX_METADATA_KEY_CHARS} characters")
        if text is not None and len(text) > MAX_METADATA_VALUE_CHARS:
            raise ValueError(f"metadata values may be at most {MAX_METADATA_VALUE_CHARS} characters")
    return metadata


Metadata = Annotated[dict[str, str], AfterValidator(check_metadata)]
"""A ``metadata`` field: string values within the limits."""

MetadataPatch = Annotated[dict[str, str | None], AfterValidator(check_metadata)]
"""A metadata update: ``None`` values delete their keys."""
