"""The settings' parts that are more than a value: an upstream model, an in-process model, an API key."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path

from platformdirs import user_data_dir

__all__ = ["ApiKey", "EmbeddedModelConfig", "UpstreamConfig", "default_db_url"]


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
    moderation: str | None = None
    """``openai`` or ``guard``: a moderation model (see docs/moderation.md), not one that answers."""


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


@dataclass(frozen=True)
class Price:
    """What one unit of one line item costs, in USD, for one model (``*``: any model without its own):
    ``input``, ``cached_input``, ``output`` (per million tokens; embeddings and moderations read
    ``input``), ``images`` (per image), ``web_search_calls``, ``file_search_calls`` (per thousand
    calls) and ``code_interpreter_sessions`` (per session; the tools' under ``*``)."""

    model: str
    line_item: str
    usd: float
