"""The TOML files the settings name: the model registry (``--model-file``) and API keys (``--keys-file``)."""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Any

from responsa.backends import SAMPLING_CONTROLS
from responsa.config import ApiKey, EmbeddedModelConfig, Price, UpstreamConfig

__all__ = ["load_keys_file", "load_model_file"]

_UPSTREAM_KEYS = {"urls", "url", "upstream_model", "api_key", "strategy", "context_window", "vision", "moderation"}
_EMBEDDED_KEYS = {"source", "context", "threads", "gpu_layers", "chat_template", "parallel", "mmproj",
                  *SAMPLING_CONTROLS}  # fmt: skip


def load_model_file(path: Path) -> tuple[tuple[UpstreamConfig, ...], tuple[EmbeddedModelConfig, ...]]:
    """Read a model registry (TOML): one ``[models.<name>]`` table per model, served by upstream
    workers (``urls``) or in-process from a GGUF (``source``).

    Raises ``ValueError`` with the file and model named when an entry is malformed.
    """
    with path.open("rb") as handle:
        data: dict[str, Any] = tomllib.load(handle)
    upstreams: list[UpstreamConfig] = []
    embedded: list[EmbeddedModelConfig] = []
    for name, entry in (data.get("models") or {}).items():
        if "source" in entry:
            embedded.append(_embedded_entry(path, name, entry))
        else:
            upstreams.append(_upstream_entry(path, name, entry))
    return tuple(upstreams), tuple(embedded)


def _upstream_entry(path: Path, name: str, entry: dict[str, Any]) -> UpstreamConfig:
    urls = entry.get("urls") or ([entry["url"]] if "url" in entry else [])
    if not urls or not all(isinstance(url, str) for url in urls):
        raise ValueError(f"{path}: model {name!r} needs 'urls' (a list of base URLs ending in /v1) or a 'source'")
    strategy = entry.get("strategy", "least_busy")
    if strategy not in ("least_busy", "round_robin"):
        raise ValueError(f"{path}: model {name!r}: strategy must be 'least_busy' or 'round_robin'")
    unknown = set(entry) - _UPSTREAM_KEYS
    if unknown:
        raise ValueError(f"{path}: model {name!r}: unknown keys {sorted(unknown)}")
    window = _positive(path, name, entry, "context_window")
    vision = entry.get("vision", True)
    if not isinstance(vision, bool):
        raise ValueError(f"{path}: model {name!r}: vision must be true or false")
    moderation = entry.get("moderation")
    if moderation not in (None, "openai", "guard"):
        raise ValueError(f"{path}: model {name!r}: moderation must be 'openai' (POST /moderations) or 'guard' "
                         "(a guard model answering 'safe' or 'unsafe' and its codes)")  # fmt: skip
    return UpstreamConfig(
        name, tuple(urls), entry.get("upstream_model"), entry.get("api_key"), strategy, window, vision, moderation
    )


def _embedded_entry(path: Path, name: str, entry: dict[str, Any]) -> EmbeddedModelConfig:
    unknown = set(entry) - _EMBEDDED_KEYS
    if unknown:
        raise ValueError(f"{path}: model {name!r}: unknown keys {sorted(unknown)} (a 'source' model takes "
                         f"{', '.join(sorted(_EMBEDDED_KEYS))})")  # fmt: skip
    for key in ("source", "mmproj"):
        if key in entry and not isinstance(entry[key], str):
            raise ValueError(f"{path}: model {name!r}: {key} must be a string")
    gpu_layers = entry.get("gpu_layers")
    if gpu_layers is not None and (not isinstance(gpu_layers, int) or gpu_layers < -1):
        raise ValueError(f"{path}: model {name!r}: gpu_layers must be an integer, -1 for all")
    template = entry.get("chat_template")
    if template is not None and not isinstance(template, str):
        raise ValueError(f"{path}: model {name!r}: chat_template must be the path of a Jinja file")
    sampling = []
    for key in SAMPLING_CONTROLS:
        if key in entry:
            if not isinstance(entry[key], int | float) or isinstance(entry[key], bool):
                raise ValueError(f"{path}: model {name!r}: {key} must be a number")
            sampling.append((key, entry[key]))
    return EmbeddedModelConfig(
        source=entry["source"],
        name=name,
        context=_positive(path, name, entry, "context"),
        threads=_positive(path, name, entry, "threads"),
        parallel=_positive(path, name, entry, "parallel"),
        gpu_layers=gpu_layers,
        chat_template=(path.parent / template) if template else None,
        sampling=tuple(sampling),
        mmproj=_beside(path, entry.get("mmproj")),
    )


def _beside(path: Path, source: str | None) -> str | None:
    """A relative file path in a model file is read from the model file's folder."""
    if source is None or "://" in source or source.startswith("hf:") or Path(source).is_absolute():
        return source
    return str(path.parent / source)


def _positive(path: Path, name: str, entry: dict[str, Any], key: str) -> int | None:
    value = entry.get(key)
    if value is not None and (not isinstance(value, int) or value < 1):
        raise ValueError(f"{path}: model {name!r}: {key} must be a positive integer")
    return value


def load_keys_file(path: Path) -> tuple[ApiKey, ...]:
    """Read API keys (TOML): one ``[keys.<tenant>]`` table with ``key`` and optional limits each."""
    with path.open("rb") as handle:
        data: dict[str, Any] = tomllib.load(handle)
    keys = []
    for tenant, entry in (data.get("keys") or {}).items():
        key = entry.get("key")
        if not isinstance(key, str) or not key:
            raise ValueError(f"{path}: tenant {tenant!r} needs a 'key' string")
        unknown = set(entry) - {"key", "requests_per_minute", "tokens_per_minute"}
        if unknown:
            raise ValueError(f"{path}: tenant {tenant!r}: unknown keys {sorted(unknown)}")
        keys.append(ApiKey(key, tenant, entry.get("requests_per_minute"), entry.get("tokens_per_minute")))
    return tuple(keys)


_LINE_ITEMS = frozenset({"input", "cached_input", "output", "images", "web_search_calls", "file_search_calls",
                         "code_interpreter_sessions"})  # fmt: skip


def load_prices_file(path: Path) -> tuple[Price, ...]:
    """Read prices (TOML): one ``[models."<name>"]`` table each (``"*"`` for any model), its line items
    in USD (see :class:`~responsa.config.Price`); the tools' under ``[tools]``."""
    with path.open("rb") as handle:
        data: dict[str, Any] = tomllib.load(handle)
    unknown = set(data) - {"models", "tools"}
    if unknown:
        raise ValueError(f"{path}: unknown tables {sorted(unknown)} (expected [models.<name>] and [tools])")
    tables = [*((name, entry) for name, entry in (data.get("models") or {}).items()), ("*", data.get("tools") or {})]
    prices = []
    for model, entry in tables:
        for line_item, usd in entry.items():
            if line_item not in _LINE_ITEMS:
                raise ValueError(f"{path}: {model!r}: unknown line item {line_item!r} (expected {sorted(_LINE_ITEMS)})")
            if not isinstance(usd, int | float) or isinstance(usd, bool) or usd < 0:
                raise ValueError(f"{path}: {model!r}: {line_item} must be a number of USD, 0 or more")
            prices.append(Price(model, line_item, float(usd)))
    return tuple(prices)
