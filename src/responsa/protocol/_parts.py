"""Content parts: the typed pieces of messages and tool outputs, discriminated by ``type``."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import Discriminator, Field, Tag

from ._base import WirePart

__all__ = [
    "Annotation",
    "ContentPart",
    "InputFile",
    "InputImage",
    "InputText",
    "OutputText",
    "ReasoningText",
    "Refusal",
    "SummaryText",
    "UnknownPart",
]


class InputText(WirePart):
    """Text the client sends."""

    type: Literal["input_text"] = "input_text"
    text: str


class InputImage(WirePart):
    """An image by URL (``https:`` or ``data:``) or by uploaded file id."""

    type: Literal["input_image"] = "input_image"
    image_url: str | None = None
    file_id: str | None = None
    detail: Literal["low", "high", "auto", "original"] | None = None


class InputFile(WirePart):
    """A file inline (``file_data``), by URL or by uploaded file id."""

    type: Literal["input_file"] = "input_file"
    file_id: str | None = None
    file_data: str | None = None
    file_url: str | None = None
    filename: str | None = None


class Annotation(WirePart):
    """A citation or file reference attached to output text (kept as sent)."""

    type: str


class OutputText(WirePart):
    """Text the model produced."""

    type: Literal["output_text"] = "output_text"
    text: str
    annotations: list[Annotation] = Field(default_factory=list)
    logprobs: list[dict[str, Any]] | None = None


class Refusal(WirePart):
    """The model declined to answer."""

    type: Literal["refusal"] = "refusal"
    refusal: str


class SummaryText(WirePart):
    """One part of a reasoning summary."""

    type: Literal["summary_text"] = "summary_text"
    text: str


class ReasoningText(WirePart):
    """Raw reasoning text, where a model exposes it."""

    type: Literal["reasoning_text"] = "reasoning_text"
    text: str


class UnknownPart(WirePart):
    """A content part of a type we do not know; kept verbatim."""

    type: str


_PART_TAGS = frozenset({"input_text", "input_image", "input_file", "output_text", "refusal", "reasoning_text"})


def _part_tag(value: Any) -> str:
    kind = value.get("type") if isinstance(value, dict) else getattr(value, "type", None)
    return kind if isinstance(kind, str) and kind in _PART_TAGS else "unknown"  # a non-string type: a 400


ContentPart = Annotated[
    Annotated[InputText, Tag("input_text")]
    | Annotated[InputImage, Tag("input_image")]
    | Annotated[InputFile, Tag("input_file")]
    | Annotated[OutputText, Tag("output_text")]
    | Annotated[Refusal, Tag("refusal")]
    | Annotated[ReasoningText, Tag("reasoning_text")]
    | Annotated[UnknownPart, Tag("unknown")],
    Discriminator(_part_tag),
]
