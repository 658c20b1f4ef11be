"""Settings: one typed object built by the CLI (or tests); nothing below reads the environment."""

from __future__ import annotations

import hashlib
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from platformdirs import user_data_dir

__all__ = ["ApiKey", "Settings", "UpstreamConfig", "default_db_url", "load_keys_file", "load_model_file"]


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


def load_model_file(path: Path) -> tuple[UpstreamConfig, ...]:
    """Read a model registry (TOML): one ``[models.<name>]`` table per model.

    Raises ``ValueError`` with the file and model named when an entry is malformed.
    """
    with path.open("rb") as handle:
        data: dict[str, Any] = tomllib.load(handle)
    models: list[UpstreamConfig] = []
    for name, entry in (data.get("models") or {}).items():
        urls = entry.get("urls") or ([entry["url"]] if "url" in entry else [])
        if not urls or not all(isinstance(url, str) for url in urls):
            raise ValueError(f"{path}: model {name!r} needs 'urls' (a list of base URLs ending in /v1)")
        strategy = entry.get("strategy", "least_busy")
        if strategy not in ("least_busy", "round_robin"):
            raise ValueError(f"{path}: model {name!r}: strategy must be 'least_busy' or 'round_robin'")
        unknown = set(entry) - {"urls", "url", "upstream_model", "api_key", "strategy", "context_window", "vision"}
        if unknown:
            raise ValueError(f"{path}: model {name!r}: unknown keys {sorted(unknown)}")
        window = entry.get("context_window")
        if window is not None and (not isinstance(window, int) or window < 1):
            raise ValueError(f"{path}: model {name!r}: context_window must be a positive integer")
        vision = entry.get("vision", True)
        if not isinstance(vision, bool):
            raise ValueError(f"{path}: model {name!r}: vision must be true or false")
        models.append(
            UpstreamConfig(
                name, tuple(urls), entry.get("upstream_model"), entry.get("api_key"), strategy, window, vision
            )
        )
    return tuple(models)


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
    redis_url: str | None = None
    """Redis for fleet-wide rate limits (None: each process limits on its own)."""
    redis_fail_open: bool = True
    """With Redis unreachable, serve under this process's own limits (else 503)."""
    max_generations: int = 256
    """Generations one backend runs at once in this process (the embedded model runs one)."""
    max_queued_generations: int = 64
    """Requests waiting for a backend at its cap; past them, 429."""
    secret_key: str | None = None
    default_truncation: Literal["disabled", "auto"] = "disabled"
    """``truncation`` for requests that do not say (the API's default is ``disabled``)."""
    embedded_context: int = 4096
    """The embedded model's context window in tokens (SmolLM2 was trained to 8,192)."""
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
