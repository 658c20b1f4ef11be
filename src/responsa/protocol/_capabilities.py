"""What the server can do beyond answering, as probed once at start: each optional capability on, or
off with why and how to turn it on. ``/v1/server`` and ``responsa doctor`` report them."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

__all__ = ["Capability"]


@dataclass(frozen=True)
class Capability:
    """One optional capability: a library, a binary or a service the server found working, or not."""

    name: str
    on: bool
    detail: str
    """What it is when on; why it is off (the probe's real error) when off."""
    fix: str | None = None
    """How to turn it on: the package or system package to install, the flag to set."""
    default: bool = True
    """Expected on in a default install: ``responsa doctor`` fails while such a one is off."""

    @classmethod
    def probed(cls, name: str, failure: str | None, works: str, fix: str, default: bool = True) -> Capability:
        """On with ``works`` when the probe found no ``failure``; off with the failure and ``fix`` otherwise."""
        if failure is None:
            return cls(name, True, works, default=default)
        return cls(name, False, failure, fix, default)

    def as_json(self) -> dict[str, Any]:
        return {"on": self.on, "detail": self.detail, "fix": self.fix, "default": self.default}
