"""Documents into searchable text: extraction by file type, and chunking with overlap.

Tokens here are word pieces (a run of letters and digits, or one other visible character), which
stand in for a model tokenizer's (no tokenizer file is downloaded): English prose has about 1.3 of
them per word, close to what OpenAI's tokenizer counts, so "800 tokens with 400 of overlap", OpenAI's
default, means about the same amount of text here.
"""

from __future__ import annotations

import html
import io
import json
import re
from dataclasses import dataclass
from html.parser import HTMLParser

from responsa.protocol import failure_of, probe_in_child

__all__ = ["DEFAULT_CHUNKING", "Chunking", "UnsupportedFile", "chunk_text", "extract_text", "probe_pdf_text"]

_TOKEN = re.compile(r"\w+|[^\w\s]")


class UnsupportedFile(Exception):
    """The file's type has no text to extract (or its bytes are not what its name says)."""


@dataclass(frozen=True)
class Chunking:
    max_chunk_size_tokens: int = 800
    chunk_overlap_tokens: int = 400


DEFAULT_CHUNKING = Chunking()


class _Text(HTMLParser):
    """The visible text of an HTML page: no scripts, styles or tags; blocks on their own lines."""

    _SKIP = frozenset({"script", "style", "noscript", "template"})
    _BLOCKS = frozenset({"p", "div", "br", "li", "tr", "h1", "h2", "h3", "h4", "h5", "h6", "section", "article"})

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.parts: list[str] = []
        self._skipping = 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in self._SKIP:
            self._skipping += 1
        elif tag in self._BLOCKS:
            self.parts.append("\n")

    def handle_endtag(self, tag: str) -> None:
        if tag in self._SKIP and self._skipping:
            self._skipping -= 1

    def handle_data(self, data: str) -> None:
        if not self._skipping:
            self.parts.append(data)


_PDF_PROBE = """
import io, pypdf
writer, written = pypdf.PdfWriter(), io.BytesIO()
writer.add_blank_page(72, 72)
writer.write(written)
pypdf.PdfReader(io.BytesIO(written.getvalue())).pages[0].extract_text()
"""


def probe_pdf_text() -> str | None:
    """None when pypdf writes and reads back a PDF here; otherwise its error."""
    return probe_in_child(_PDF_PROBE)


def _pdf_text(data: bytes) -> str:
    try:
        from pypdf import PdfReader
        from pypdf.errors import PdfReadError
    except ImportError as exc:  # reported at start too (the pdf_text capability)
        raise UnsupportedFile(f"PDF text cannot be read on this server: {failure_of(exc)}") from exc

    try:
        reader = PdfReader(io.BytesIO(data))
        return "\n\n".join(page.extract_text() or "" for page in reader.pages)
    except (PdfReadError, ValueError, KeyError) as exc:
        raise UnsupportedFile(f"The PDF could not be read: {exc}") from exc


def _decoded(data: bytes) -> str:
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise UnsupportedFile("The file is not UTF-8 text.") from exc


def extract_text(filename: str, data: bytes) -> str:
    """The text of a plain text, Markdown, HTML, JSON or PDF file, by its name (or its first bytes)."""
    name = filename.lower()
    if name.endswith(".pdf") or data.startswith(b"%PDF-"):
        return _pdf_text(data)
    if name.endswith((".html", ".htm")):
        page = _Text()
        page.feed(_decoded(data))
        return html.unescape("".join(page.parts))
    if name.endswith(".json"):
        try:
            return json.dumps(json.loads(_decoded(data)), indent=1, ensure_ascii=False)
        except json.JSONDecodeError as exc:
            raise UnsupportedFile(f"The JSON file is not valid JSON: {exc}") from exc
    text = _decoded(data)
    if "\x00" in text:
        raise UnsupportedFile("The file is binary, not text.")
    return text


def chunk_text(text: str, chunking: Chunking = DEFAULT_CHUNKING) -> list[str]:
    """Windows of at most ``max_chunk_size_tokens`` tokens, each starting ``max - overlap`` tokens
    after the last; a chunk is the original text between its first and last token."""
    spans = [match.span() for match in _TOKEN.finditer(text)]
    if not spans:
        return []
    size = chunking.max_chunk_size_tokens
    step = max(size - chunking.chunk_overlap_tokens, 1)
    chunks = []
    for start in range(0, len(spans), step):
        window = spans[start : start + size]
        chunks.append(text[window[0][0] : window[-1][1]])
        if start + size >= len(spans):
            break
    return chunks
