"""``background_options.completion_window`` (``2h`` or ``8h``): background work that may finish later
does not take the line; it waits apart for a slot, for as long as its window allows, soonest window
first (see ``Admission.later``). A follow-up naming a ``continuation_id`` ranks before the rest of its
window. ``24h``, or none, takes the line as any create does.

A request feature (``_features``): named by a request with such a window.
"""

from __future__ import annotations

from responsa.protocol import CreateResponseRequest, InvalidRequest

from ._features import FeatureRun

__all__ = ["BackgroundWindowsFeature"]

_WINDOWS = {"2h": (2, 2 * 3600.0), "8h": (4, 8 * 3600.0)}
"""A later completion window's rank among background work waiting apart, and how long it may wait."""


class BackgroundWindowsFeature:
    """Later completion windows of background responses."""

    name = "background_options.completion_window"
    items: frozenset[type] = frozenset()
    fields: frozenset[str] = frozenset({"background_options"})

    def open(self, request: CreateResponseRequest, context_types: frozenset[type]) -> FeatureRun | None:
        options = request.background_options
        window = options.completion_window if options is not None else None
        if window not in _WINDOWS:
            return None
        if not request.background:
            raise InvalidRequest(
                f"The '{window}' completion window needs 'background: true'.",
                param="background_options.completion_window",
            )
        if request.stream:
            raise InvalidRequest(f"The '{window}' completion window cannot be streamed.", param="stream")
        rank, patience = _WINDOWS[window]
        return _WindowRun(rank - 1 if options is not None and options.continuation_id else rank, patience)


class _WindowRun(FeatureRun):
    def __init__(self, rank: int, patience: float) -> None:
        self._waits = (rank, patience)

    def waits(self) -> tuple[int, float] | None:
        return self._waits
