"""Settings: one typed object built by the CLI (or tests); nothing below reads the environment."""

from __future__ import annotations

import hashlib
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from platformdirs import user_data_dir

from responsa.backends import SAMPLING_CONTROLS

__all__ = [
    "ApiKey",
    "EmbeddedModelConfig",
    "Settings",
    "UpstreamConfig",
    "default_db_url",
    "load_keys_file",
    "load_model_file",
]


def default_db_url() -> str:
    """SQLite in the user's data directory, e.g. ``~/.local/share/responsa/responsa.db``."""
    return f"sqlite:///{Path(user_data_dir('responsa')) / 'responsa.db'}"


@dataclass(frozen=True)
class UpstreamConfig:
    """One model served by OpenAI-compatible Chat Completions workers."""

    name: str
    urls: tuple[str, ...]
    upstream_model: str | None = None
    api_key: str | None = None
    strategy: str = "least_busy"
    context_window: int | None = None
    vision: bool = True


@dataclass(frozen=True)
class EmbeddedModelConfig:
    """One GGUF served in-process: ``serve --model SOURCE`` or a model-file entry with ``source``.
    Settings left None take the serve options' values (``--embedded-context``, ``--threads``...)."""

    source: str
    name: str | None = None
    """The name in ``/v1/models`` (default: from the file name, or ``repo:quant``)."""
    path: Path | None = None
    """The local file, once the CLI has fetched the source."""
    context: int | None = None
    threads: int | None = None
    gpu_layers: int | None = None
    chat_template: Path | None = None
    """A Jinja file used instead of the template in the GGUF's metadata."""
    parallel: int | None = None
    sampling: tuple[tuple[str, float], ...] = ()
    """Defaults for the sampling controls a request leaves out, e.g. ``(("temperature", 0.7),)``."""
    mmproj: str | None = None
    """The source of a multimodal projector (a file, URL or ``hf:`` file); a repository source finds its own."""
    mmproj_path: Path | None = None
    """The projector's local file, once the CLI has fetched it (the model then reads images)."""


_UPSTREAM_KEYS = {"urls", "url", "upstream_model", "api_key", "strategy", "context_window", "vision"}
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
    return UpstreamConfig(
        name, tuple(urls), entry.get("upstream_model"), entry.get("api_key"), strategy, window, vision
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


@dataclass(frozen=True)
class ApiKey:
    """A bearer key, the tenant it acts for, and its limits (``None``: unlimited)."""

    key: str
    tenant: str
    requests_per_minute: int | None = None
    tokens_per_minute: int | None = None

    @classmethod
    def bare(cls, key: str) -> ApiKey:
        """A key given on its own: its tenant is named after a hash of it (never the key itself)."""
        return cls(key=key, tenant="key-" + hashlib.sha256(key.encode()).hexdigest()[:16])


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


@dataclass(frozen=True)
class Settings:
    """Everything the server needs to start."""

    host: str = "127.0.0.1"
    port: int = 8080
    db_url: str = field(default_factory=default_db_url)
    embedded: bool = True
    """Serve the packaged model (SmolLM2, or ``gguf``)."""
    gguf: Path | None = None
    simulator: bool = True
    upstreams: tuple[str, ...] = ()
    models: tuple[UpstreamConfig, ...] = ()
    upstream_health_interval_secs: float = 5.0
    mcp_allow_hosts: tuple[str, ...] = ()
    mcp_call_timeout_secs: float = 30.0
    mcp_list_timeout_secs: float = 15.0
    shutdown_grace_secs: float = 30.0
    background_lease_secs: float = 15.0
    api_keys: tuple[ApiKey, ...] = ()
    max_body_bytes: int = 16 * 1024 * 1024
    max_input_items: int = 4096
    max_file_bytes: int = 512 * 1024 * 1024
    embedding_model: str | None = None
    """A served model whose ``/v1/embeddings`` vector stores use for hybrid search (None: keywords only)."""
    """Largest upload to ``POST /v1/files`` (413 above); OpenAI's limit is 512 MB."""
    redis_url: str | None = None
    """Redis for fleet-wide rate limits (None: each process limits on its own)."""
    redis_fail_open: bool = True
    """With Redis unreachable, serve under this process's own limits (else 503)."""
    max_generations: int = 256
    """Generations one backend runs at once in this process (an embedded model runs its ``parallel``)."""
    max_queued_generations: int = 64
    """Requests waiting for a backend at its cap; past them, 429."""
    secret_key: str | None = None
    default_truncation: Literal["disabled", "auto"] = "disabled"
    """``truncation`` for requests that do not say (the API's default is ``disabled``)."""
    embedded_context: int = 4096
    """Embedded models' context window in tokens (SmolLM2 was trained to 8,192)."""
    embedded_models: tuple[EmbeddedModelConfig, ...] = ()
    """GGUFs served beside (or, with ``embedded=False``, instead of) the packaged model."""
    threads: int | None = None
    """Threads each embedded model decodes with (None: every core)."""
    gpu_layers: int = 0
    """Layers each embedded model offloads to a GPU (-1: all), for llama.cpp builds with one."""
    chat_template: Path | None = None
    """A Jinja chat template for the embedded models instead of their GGUF's own."""
    parallel: int = 4
    """Requests each embedded model decodes at once, each in its own context window (KV cache)."""
    websocket_max_age_secs: float = 3600.0
    """How long one WebSocket connection may stay open (then ``websocket_connection_limit_reached``)."""
    hosted_tools: Literal["ignore", "reject"] = "ignore"
    """What to do with a hosted tool (``web_search``...) the model's backend cannot run."""
    """Seals compaction items; replicas sharing a store need the same one (see docs/configuration.md)."""
    log_level: str = "info"
    sim_token_delay_ms: float = 0.0
    sim_latency: bool = True
    sim_profiles: Path | None = None
    sim_fault_rate: float = 0.0
    sim_faults: tuple[str, ...] = ("rate_limit", "server_error", "unavailable", "mid_stream")
    sim_timeout_secs: float = 60.0
    responses_store_ttl_secs: float = 0
    responses_store_max_entries: int | None = None
    conversation_store_ttl_secs: float = 0
    conversation_store_max_entries: int | None = None
