"""``responsa serve``: builds :class:`~responsa.config.Settings` from options (each also an env var),
generated from the settings' declarations in ``responsa.config``."""

from __future__ import annotations

import tomllib
from collections.abc import Callable
from dataclasses import MISSING, Field, replace
from functools import partial
from pathlib import Path
from types import UnionType
from typing import Any, Literal, TypeVar, get_args, get_origin, get_type_hints

import click

from responsa._admin_commands import projects, usage
from responsa._config_files import load_keys_file, load_model_file, load_prices_file
from responsa._model_commands import fetch_models, models, named_source, pull
from responsa.config import ApiKey, Option, Settings, declared, default_db_url

__all__ = ["main"]

Command = TypeVar("Command", bound=Callable[..., Any])


@click.group()
@click.version_option(package_name="responsa")
def main() -> None:
    """responsa: an OpenAI Responses API server for any model."""


def _option(setting: Field[Any], how: Option, hint: Any) -> Callable[[Command], Command]:
    """The ``serve`` option of one declared setting (see ``responsa.config.option``)."""
    optional = get_origin(hint) is UnionType
    kind = next(arg for arg in get_args(hint) if arg is not type(None)) if optional else hint
    default: Any = None if setting.default is MISSING else setting.default
    extra: dict[str, Any] = {}
    if get_origin(kind) is Literal:
        extra["type"] = click.Choice(get_args(kind))
    elif kind in (int, float):
        bounded = how.minimum is not None or how.maximum is not None or how.above
        ranged: Any = click.IntRange if kind is int else click.FloatRange
        extra["type"] = ranged(how.minimum, how.maximum, min_open=how.above) if bounded else kind
        if how.named:
            extra["type"] = _Named(extra["type"], dict(how.named))
    elif kind is Path:  # a file that exists, or a directory (one the server makes, where it says so)
        extra["type"] = click.Path(exists=not how.created, dir_okay=how.directory, file_okay=not how.directory,
                                   path_type=Path)  # fmt: skip
    elif get_origin(kind) is tuple and how.separator is not None:
        default = how.separator.join(default)
        extra["callback"] = partial(_split, how.separator)
    elif get_origin(kind) is tuple:
        extra["multiple"] = True
    shown = default not in (None, ()) and not extra.get("multiple")
    return click.option(how.flags(setting.name, kind is bool), setting.name, default=default, show_default=shown,
                        envvar=how.envvars(setting.name), help=how.summary, **extra)  # fmt: skip


class _Named(click.ParamType[int]):
    """A number, or one of the words that stand for one (``auto``)."""

    def __init__(self, number: click.ParamType[int], words: dict[str, int]) -> None:
        self.number, self.words = number, words
        self.name = f"{number.name}|{'|'.join(words)}"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        if isinstance(value, str) and value.strip().lower() in self.words:
            return self.words[value.strip().lower()]
        return self.number.convert(value, param, ctx)


def _split(separator: str, _ctx: click.Context, _param: click.Parameter, text: str) -> tuple[str, ...]:
    return tuple(part.strip() for part in text.split(separator) if part.strip())


def _settings_options(command: Command) -> Command:
    """Every declared setting as an option of ``command``, in the declarations' order."""
    hints = get_type_hints(Settings)
    for setting, how in reversed(list(declared())):
        command = _option(setting, how, hints[setting.name])(command)
    return command


@main.command()
@_settings_options
def serve(**options: Any) -> None:
    """Serve the Responses API over HTTP."""
    from responsa.serve import serve_settings

    settings = _resolved(Settings(**{name: value for name, value in options.items() if value is not None}))
    serve_settings(settings)


@main.command()
@_settings_options
def doctor(**options: Any) -> None:
    """Check this installation and what a server with these options would have: packages, capabilities
    with the reason and the fix of each one that is off, the store, the models. Exit status 1 when a
    capability a default install has is off."""
    from responsa.serve import report

    report(_resolved(Settings(**{name: value for name, value in options.items() if value is not None})))


@main.command(name="admin-key")
@click.option("--db", "db_url", default=default_db_url, envvar="RESPONSA_DB", help="The store (as serve's --db).")
@click.option("--name", default="admin", show_default=True, help="What listings call the key.")
@click.option("--expires-in-seconds", type=click.IntRange(1), default=None, help="Default: it does not expire.")
def admin_key(db_url: str, name: str, expires_in_seconds: int | None) -> None:
    """Make an admin key for the Admin API (/v1/organization/...) in the store, and print its secret
    (shown this once). Servers on that store honour it within --keys-poll-secs."""
    from responsa.serve import make_admin_key

    made = make_admin_key(db_url, name, expires_in_seconds)
    click.echo(made.value)
    click.echo(f"{made.id} ({made.name}): keep the key above; the store holds only its hash.", err=True)


def _resolved(settings: Settings) -> Settings:
    """The settings with what their files and sources name read: upstream and local models (fetched
    first), API keys with their tenants."""
    try:
        upstreams, embedded = load_model_file(settings.model_file) if settings.model_file else ((), ())
        keys = load_keys_file(settings.keys_file) if settings.keys_file else ()
        prices = load_prices_file(settings.prices_file) if settings.prices_file else ()
    except (ValueError, tomllib.TOMLDecodeError) as exc:
        raise click.ClickException(str(exc)) from exc
    embedded = fetch_models(tuple(named_source(source) for source in settings.model_sources) + embedded)
    bare = tuple(ApiKey.bare(key) for key in settings.bare_api_keys)
    return replace(settings, models=upstreams, embedded_models=embedded, api_keys=keys + bare, prices=prices)


main.add_command(pull)
main.add_command(models)
main.add_command(projects)
main.add_command(usage)

if __name__ == "__main__":
    main()
