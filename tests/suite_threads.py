"""The threads each embedded model of the suite's servers decodes with: one. The suite runs two test
processes on a 2-core machine, and llama.cpp's decoding threads wait for one another by spinning, so a
model given every core crawls whenever the other process is busy: 12 short seeded answers took 10.0 s
with two threads beside one busy core and 4.8 s with one (2.9 s and 3.9 s on an idle machine; a long
prompt's reading took the same either way). A test that names its own ``threads`` keeps them."""

from __future__ import annotations

from dataclasses import replace

from responsa.config import Settings

__all__ = ["SUITE_THREADS", "SUITE_THREADS_ENV", "with_suite_threads"]

SUITE_THREADS = 1

SUITE_THREADS_ENV = {"RESPONSA_THREADS": str(SUITE_THREADS)}
"""For a ``responsa serve`` process a test starts (its own environment comes after)."""


def with_suite_threads(settings: Settings) -> Settings:
    """``settings`` for a server the suite runs inside a test process (``serve``, ``in_process``)."""
    return settings if settings.threads is not None else replace(settings, threads=SUITE_THREADS)
