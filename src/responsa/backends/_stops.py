"""Find stop strings in text that arrives in pieces, holding back what could be the start of one."""

from __future__ import annotations

from collections.abc import Sequence

__all__ = ["StopMatcher", "partial_suffix"]


def partial_suffix(text: str, marker: str) -> int:
    """Length of the longest end of ``text`` that could begin ``marker``."""
    for size in range(min(len(marker) - 1, len(text)), 0, -1):
        if marker.startswith(text[-size:]):
            return size
    return 0


class StopMatcher:
    """``feed`` returns the text safe to emit and whether a stop string was reached."""

    def __init__(self, stops: Sequence[str], include: bool = False) -> None:
        self._stops = [stop for stop in stops if stop]
        self._include = include
        """Keep the stop string itself (``include_stop_str_in_output``)."""
        self._pending = ""

    def feed(self, text: str) -> tuple[str, bool]:
        buffer = self._pending + text
        hits = [(buffer.find(stop), stop) for stop in self._stops if stop in buffer]
        if hits:
            self._pending = ""
            at, stop = min(hits)
            return buffer[: at + (len(stop) if self._include else 0)], True
        keep = max((partial_suffix(buffer, stop) for stop in self._stops), default=0)
        self._pending = buffer[len(buffer) - keep :]
        return buffer[: len(buffer) - keep], False

    def flush(self) -> str:
        text, self._pending = self._pending, ""
        return text
