"""``/metrics`` as tests read it: a metric's samples in Prometheus' text format, by name and labels."""

from __future__ import annotations

import re

__all__ = ["metric", "samples"]


def samples(text: str, name: str, **labels: str) -> list[float]:
    """The values of ``name``'s samples whose labels include ``labels`` (given in the order the metric
    declares them); with no labels, the unlabelled sample."""
    wanted = ",".join(f'{key}="{value}"' for key, value in labels.items())
    pattern = (
        rf"^{re.escape(name)}\{{[^}}]*{re.escape(wanted)}[^}}]*\}} ([0-9.e+]+)$"
        if labels
        else rf"^{re.escape(name)} ([0-9.e+]+)$"
    )
    return [float(value) for value in re.findall(pattern, text, re.MULTILINE)]


def metric(text: str, name: str, **labels: str) -> float:
    """The sum of those samples (0 when there is none)."""
    return sum(samples(text, name, **labels))
