"""``responsa pull`` and ``responsa models``, and the fetching ``serve --model`` does before it starts."""

from __future__ import annotations

import re
from dataclasses import replace
from pathlib import Path

import click

from responsa.config import EmbeddedModelConfig
from responsa.model_files import ModelFetchError, cached_models, fetch, fetch_projector, model_name, parse_source

__all__ = ["fetch_models", "models", "named_source", "pull"]

_NAMED = re.compile(r"^(?P<name>[\w.:-]+)=(?P<source>.+)$")


def named_source(text: str) -> EmbeddedModelConfig:
    """``--model [NAME=]SOURCE``: the model to serve, named by ``NAME`` or after its source."""
    found = _NAMED.match(text)
    if found and not text.startswith(("http://", "https://")):
        return EmbeddedModelConfig(source=found["source"], name=found["name"])
    return EmbeddedModelConfig(source=text)


def fetch_models(configs: tuple[EmbeddedModelConfig, ...]) -> tuple[EmbeddedModelConfig, ...]:
    """Each model with its local path and name, downloading what is not here yet (with a progress bar)."""
    fetched = []
    for config in configs:
        path = _fetched(config.source)
        projector = _fetched(config.mmproj) if config.mmproj else fetch_projector(parse_source(config.source))
        fetched.append(replace(config, path=path, name=config.name or model_name(path.name), mmproj_path=projector))
    names = [config.name or "" for config in fetched]
    if doubled := sorted({name for name in names if names.count(name) > 1}):
        raise click.ClickException(f"two models are named {doubled[0]!r}: name one with --model NAME=SOURCE")
    return tuple(fetched)


def _fetched(source: str, refresh: bool = False) -> Path:
    """The local file of ``source`` (see :func:`responsa.model_files.fetch`); what fails, a clear CLI error."""
    try:
        return fetch(parse_source(source), refresh=refresh)
    except (ValueError, ModelFetchError) as exc:
        raise click.ClickException(str(exc)) from exc


@click.command()
@click.argument("source")
def pull(source: str) -> None:
    """Download a GGUF model once, with a progress bar, resuming an interrupted download.

    SOURCE: an http(s):// URL of a GGUF (append #sha256=HEX to check it), hf:owner/repo/file.gguf, or
    owner/repo:QUANT (the repository's GGUF of that quantization, e.g. Q4_K_M, with its multimodal projector
    when it has one). Hugging Face files go to its cache (HF_HOME, HF_TOKEN and HF_ENDPOINT apply); URLs to
    responsa's cache directory.
    """
    path = _fetched(source, refresh=True)
    click.echo(f"{model_name(path.name)}: {path}")
    if projector := fetch_projector(parse_source(source)):
        click.echo(f"projector (reads images): {projector}")
    click.echo(f"serve it with: responsa serve --model {source}")


@click.command()
def models() -> None:
    """List the GGUF models pulled to this machine, with their sizes."""
    found = cached_models()
    if not found:
        click.echo("No models pulled yet: responsa pull SOURCE")
        return
    width = max(len(model.name) for model in found)
    for model in found:
        state = "" if model.complete else "  (partial: pull again to resume)"
        click.echo(f"{model.name:<{width}}  {_size(model.size):>9}  {model.source}{state}")


def _size(size: float) -> str:
    if size < 1024:
        return f"{size:.0f} B"
    for unit in ("KiB", "MiB", "GiB"):
        size /= 1024
        if size < 1024 or unit == "GiB":
            break
    return f"{size:.1f} {unit}"
