"""Settings: one typed object built by the CLI (or tests); nothing below reads the environment."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from platformdirs import user_data_dir

__all__ = ["Settings", "default_db_url"]


def default_db_url() -> str:
    """SQLite in the user's data directory, e.g. ``~/.local/share/responsa/responsa.db``."""
    return f"sqlite:///{Path(user_data_dir('responsa')) / 'responsa.db'}"


@dataclass(frozen=True)
class Settings:
    """Everything the server needs to start."""

    host: str = "127.0.0.1"
    port: int = 8080
    backend: str = "simulator"
    db_url: str = field(default_factory=default_db_url)
    api_keys: tuple[str, ...] = ()
    log_level: str = "info"
    sim_token_delay_ms: float = 0.0
    responses_store_ttl_secs: float = 0
    responses_store_max_entries: int | None = None
    conversation_store_ttl_secs: float = 0
    conversation_store_max_entries: int | None = None
