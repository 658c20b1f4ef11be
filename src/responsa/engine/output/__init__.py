"""A response's output as it is made and shown: events numbered and placed (:class:`Emitter`), the
optional data ``include`` shows, usage, the timeline, reasoning's events. It knows no tool kind and
reaches nothing: every other part of the engine may use it."""

from ._emitter import Emitter, Where
from ._includes import ENCRYPTED_REASONING, KNOWN_INCLUDES, check_includes, create_view, shown, with_includes
from ._reasoning_output import close_reasoning, reasoning_delta
from ._timeline import Timeline
from ._usage import add_usage, tokens_of, usage_of

__all__ = [
    "ENCRYPTED_REASONING",
    "KNOWN_INCLUDES",
    "Emitter",
    "Timeline",
    "Where",
    "add_usage",
    "check_includes",
    "close_reasoning",
    "create_view",
    "reasoning_delta",
    "shown",
    "tokens_of",
    "usage_of",
    "with_includes",
]
