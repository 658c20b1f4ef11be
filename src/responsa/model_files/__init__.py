"""Where embedded models come from: local GGUFs, URLs and Hugging Face repositories, pulled once
into a cache (used by the CLI only: the server is given paths)."""

from ._cache import CachedModel, cached_models
from ._fetch import ModelFetchError, fetch, models_dir
from ._source import ModelSource, model_name, parse_source

__all__ = [
    "CachedModel",
    "ModelFetchError",
    "ModelSource",
    "cached_models",
    "fetch",
    "model_name",
    "models_dir",
    "parse_source",
]
