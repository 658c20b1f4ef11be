"""Simulated models: which reason, which reasoning efforts they take, and how fast they are.

Defaults follow seed 003 (o-series, GPT-5 family, GPT-4.1 family) plus the plain ``sim`` models;
a TOML file can change or add profiles.
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

__all__ = ["EFFORT_MULTIPLIERS", "ModelProfile", "default_profiles", "load_profiles"]

EFFORT_MULTIPLIERS = {"none": 0.0, "minimal": 0.5, "low": 1.5, "medium": 3.0, "high": 6.0, "xhigh": 10.0, "max": 15.0}
_STANDARD = frozenset({"none", "low", "medium", "high"})


@dataclass(frozen=True)
class ModelProfile:
    """How one simulated model behaves. Times are in milliseconds."""

    name: str
    reasoning: bool = False
    efforts: frozenset[str] = field(default_factory=frozenset)
    default_effort: str = "medium"
    ttft_ms: float = 0.0
    tokens_per_second: float = 0.0
    """0 means as fast as the server can go."""
    jitter: float = 0.0
    """Relative spread of each delay (0.2: +-20%)."""
    context_window: int | None = None
    """Tokens one turn may read and write; more input is a 400 (or dropped under ``truncation: auto``)."""


def default_profiles() -> dict[str, ModelProfile]:
    gpt5 = _STANDARD | {"minimal"}
    profiles = [
        ModelProfile("sim"),
        ModelProfile("sim-large"),
        ModelProfile("o1", True, _STANDARD, ttft_ms=900, tokens_per_second=60, jitter=0.2),
        ModelProfile("o3", True, _STANDARD, ttft_ms=700, tokens_per_second=80, jitter=0.2),
        ModelProfile("o4-mini", True, _STANDARD, ttft_ms=400, tokens_per_second=140, jitter=0.2),
        ModelProfile("gpt-5", True, gpt5, ttft_ms=600, tokens_per_second=90, jitter=0.2),
        ModelProfile("gpt-5-mini", True, gpt5, ttft_ms=350, tokens_per_second=150, jitter=0.2),
        ModelProfile("gpt-5-nano", True, gpt5, ttft_ms=250, tokens_per_second=220, jitter=0.2),
        ModelProfile("gpt-5.1", True, gpt5, ttft_ms=550, tokens_per_second=100, jitter=0.2),
        ModelProfile("gpt-5.2", True, gpt5 | {"xhigh"}, ttft_ms=550, tokens_per_second=100, jitter=0.2),
        ModelProfile("gpt-4.1", ttft_ms=400, tokens_per_second=80, jitter=0.15),
        ModelProfile("gpt-4.1-mini", ttft_ms=250, tokens_per_second=130, jitter=0.15),
        ModelProfile("gpt-4.1-nano", ttft_ms=150, tokens_per_second=200, jitter=0.15),
    ]
    return {profile.name: profile for profile in profiles}


def load_profiles(path: Path, base: dict[str, ModelProfile] | None = None) -> dict[str, ModelProfile]:
    """Profiles from ``[models.<name>]`` tables, each over the default of that name if there is one."""
    with path.open("rb") as handle:
        data: dict[str, Any] = tomllib.load(handle)
    profiles = dict(base if base is not None else default_profiles())
    allowed = {"reasoning", "efforts", "default_effort", "ttft_ms", "tokens_per_second", "jitter", "context_window"}
    for name, entry in (data.get("models") or {}).items():
        unknown = set(entry) - allowed
        if unknown:
            raise ValueError(f"{path}: model {name!r}: unknown keys {sorted(unknown)}")
        changes = dict(entry)
        if "efforts" in changes:
            efforts = set(changes["efforts"])
            if not efforts <= set(EFFORT_MULTIPLIERS):
                raise ValueError(f"{path}: model {name!r}: efforts must be among {sorted(EFFORT_MULTIPLIERS)}")
            changes["efforts"] = frozenset(efforts)
        profiles[name] = replace(profiles.get(name, ModelProfile(name)), **changes)
    return profiles
