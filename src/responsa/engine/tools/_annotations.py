"""The annotations an answer carries for what the server's tools gave the model: ``file_citation`` for
the files a file search drew on (at the answer's end: local models place no markers), and
``url_citation`` for each numbered web source the answer cites as ``[n]``, and
``container_file_citation`` where the answer names a file the code interpreter wrote
(``sandbox:/mnt/data/report.csv``, or the bare path).

A model that has never seen OpenAI's citation format still cites: the web search's results reach it
numbered, with the instruction to cite by number, and each ``[n]`` in the answer becomes an
annotation spanning the marker."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

__all__ = ["Annotations"]

_MARKER = re.compile(r"\[(\d{1,3})\]")
_CONTAINER_PATH = re.compile(r"(?:sandbox:)?(/mnt/data/[^\s)\]\"'<>`]+)")


@dataclass
class Annotations:
    """What one response's server-run calls gave the answer to cite."""

    files: list[dict[str, str]] = field(default_factory=list)
    sources: dict[int, tuple[str, str]] = field(default_factory=dict)
    """Number → (url, title) of the web pages the model read."""
    container_files: dict[str, dict[str, str]] = field(default_factory=dict)
    """Path (``/mnt/data/…``) → the container file's ``container_id``, ``file_id`` and ``filename``."""

    def add_container_file(self, container_id: str, file_id: str, path: str) -> None:
        filename = path.rsplit("/", 1)[-1]
        self.container_files[path] = {"container_id": container_id, "file_id": file_id, "filename": filename}

    def cite_file(self, file_id: str, filename: str) -> None:
        if all(cited["file_id"] != file_id for cited in self.files):
            self.files.append({"file_id": file_id, "filename": filename})

    def add_source(self, url: str, title: str) -> int:
        """The number the model cites the page by (the same page keeps its number)."""
        for number, (known, _title) in self.sources.items():
            if known == url:
                return number
        number = len(self.sources) + 1
        self.sources[number] = (url, title)
        return number

    def for_text(self, text: str) -> list[dict[str, Any]]:
        """The annotations of an answer: a ``url_citation`` for each ``[n]`` naming a source, a
        ``container_file_citation`` for each mention of a file the code wrote, then a ``file_citation``
        per file searched (at the end of the text)."""
        found: list[dict[str, Any]] = []
        if self.sources:
            for marker in _MARKER.finditer(text):
                source = self.sources.get(int(marker.group(1)))
                if source is not None:
                    url, title = source
                    found.append({"type": "url_citation", "url": url, "title": title,
                                  "start_index": marker.start(), "end_index": marker.end()})  # fmt: skip
        if self.container_files:
            for mention in _CONTAINER_PATH.finditer(text):
                cited = self.container_files.get(mention.group(1).rstrip(".,;:!?"))
                if cited is not None:
                    found.append({"type": "container_file_citation", **cited, "start_index": mention.start(),
                                  "end_index": mention.start() + len(mention.group(0).rstrip(".,;:!?"))})  # fmt: skip
        found += [{"type": "file_citation", "index": len(text), **cited} for cited in self.files]
        return found
