"""What ``responsa models`` lists: every GGUF pulled here, in responsa's cache and Hugging Face's."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from ._fetch import models_dir
from ._hub_cache import snapshots
from ._source import is_model_file, model_name

__all__ = ["CachedModel", "cached_models"]


@dataclass(frozen=True)
class CachedModel:
    name: str
    """The name ``serve --model`` gives it."""
    source: str
    """What to pass to ``serve --model`` to serve it (works offline)."""
    size: int
    """Bytes on disk (every shard of a split model; what has arrived of an interrupted download)."""
    path: Path
    complete: bool = True


def cached_models() -> list[CachedModel]:
    """Pulled GGUFs, URL downloads first, then Hugging Face files by repository."""
    return _url_downloads() + _hub_files()


def _url_downloads() -> list[CachedModel]:
    found = []
    for path in sorted(models_dir().glob("*/*")):
        complete = path.suffix.lower() == ".gguf"
        if complete or path.name.lower().endswith(".gguf.incomplete"):
            name = path.name.removesuffix(".incomplete")
            found.append(CachedModel(model_name(name), str(path), path.stat().st_size, path, complete))
    return found


def _hub_files() -> list[CachedModel]:
    found: dict[tuple[str, str, str], CachedModel] = {}
    for repo, revision, files in snapshots():
        for relative in sorted(name for name in files if is_model_file(name)):
            file = files[relative]
            name = model_name(relative)
            key = (repo.repo_id, revision.commit_hash, name)
            if key in found:  # another shard of the same model
                first = found[key]
                found[key] = CachedModel(name, first.source, first.size + file.size_on_disk, first.path)
            else:
                source = f"hf:{repo.repo_id}/{relative}"
                found[key] = CachedModel(name, source, file.size_on_disk, file.file_path)
    return list(found.values())
