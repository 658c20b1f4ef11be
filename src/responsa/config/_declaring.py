"""How a setting is declared once: its default and how it is given and described (:func:`option`), and
what is read back from the declarations (the ``serve`` options in cli.py, the docs table here)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import MISSING, Field, dataclass, field, fields
from typing import Any

__all__ = ["Option", "declared", "option", "settings_table"]


@dataclass(frozen=True)
class Option:
    """How a setting is given (a ``serve`` option, an environment variable) and described."""

    summary: str
    """The option's ``--help``."""
    doc: str | None = None
    """Its row in docs/configuration.md (default: the summary)."""
    shown: str | None = None
    """The default as the docs show it (default: the value)."""
    flag: str | None = None
    """Default: ``--name-with-dashes`` (``--name/--no-name`` for a switch)."""
    env: str | None = None
    """Default: ``RESPONSA_NAME``."""
    seed_env: str | None = None
    """A seed server's variable for the same setting (mlxcel's ``LLAMA_ARG_…``), read when ours is unset."""
    minimum: float | None = None
    maximum: float | None = None
    above: bool = False
    """The minimum itself is not allowed."""
    separator: str | None = None
    """A list given as one string split on this (default: a repeatable option, space-separated in the env)."""
    directory: bool = False
    """A path setting that names a directory (default: an existing file)."""
    created: bool = False
    """A directory the server makes if it is missing (default: it must exist)."""
    named: tuple[tuple[str, int], ...] = ()
    """Words a number setting also takes, each standing for a number (``auto`` for ``0``)."""

    def flags(self, name: str, switch: bool) -> str:
        dashed = name.replace("_", "-")
        return self.flag or (f"--{dashed}/--no-{dashed}" if switch else f"--{dashed}")

    def envvar(self, name: str) -> str:
        return self.env or f"RESPONSA_{name.upper()}"

    def envvars(self, name: str) -> list[str]:
        """The variables read, first found wins: ours, then the seed server's."""
        return [self.envvar(name), *([self.seed_env] if self.seed_env else [])]


def option(default: Any = None, *, factory: Callable[[], Any] | None = None, **how: Any) -> Any:
    """A setting: its default (or ``factory``) and its :class:`Option` (``summary``, ``doc``...)."""
    metadata = {"option": Option(**how)}
    if factory is not None:
        return field(default_factory=factory, metadata=metadata)
    return field(default=default, metadata=metadata)


def declared(settings: type) -> Iterator[tuple[Field[Any], Option]]:
    """Every declared setting, in order, with its option."""
    for setting in fields(settings):
        if "option" in setting.metadata:
            yield setting, setting.metadata["option"]


def _shown(setting: Field[Any], how: Option) -> str:
    if how.shown is not None:
        return how.shown
    default = setting.default
    if isinstance(default, bool):
        return "on" if default else "off"
    if default is None or default is MISSING or default == ():
        return "none"
    if isinstance(default, tuple):
        return f"`{(how.separator or ' ').join(default)}`"
    if isinstance(default, float) and default.is_integer():
        return f"`{int(default)}`"
    return f"`{default}`"


def settings_table(settings: type) -> str:
    """The table of settings in docs/configuration.md: flag, environment variable, default, what it does."""
    rows = ["| flag | env var | default | what it does |", "| --- | --- | --- | --- |"]
    for setting, how in declared(settings):
        flag = how.flags(setting.name, isinstance(setting.default, bool))
        envs = ", ".join(f"`{env}`" for env in how.envvars(setting.name))
        rows.append(f"| `{flag}` | {envs} | {_shown(setting, how)} | {how.doc or how.summary} |")
    return "\n".join(rows) + "\n"
