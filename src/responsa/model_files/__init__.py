"""Where embedded models come from: local GGUFs, URLs and Hugging Face repositories, pulled once
into a cache (used by the CLI only: the server is given paths)."""

from ._cache import CachedModel, cached_models
from ._fetch import ModelFetchError, fetch, fetch_projector, models_dir
from ._source import ModelSource, model_name, parse_source

__all__ = [
    "CachedModel",
    "ModelFetchError",
    "ModelSource",
    "cached_models",
    "fetch",
    "fetch_projector",
    "model_name",
    "models_dir",
    "parse_source",
]
