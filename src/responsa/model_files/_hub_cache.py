"""What the Hugging Face cache holds, read through ``huggingface_hub``'s own scanner."""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from huggingface_hub import CachedFileInfo, CachedRepoInfo, CachedRevisionInfo

__all__ = ["snapshots"]


def snapshots() -> Iterator[tuple[CachedRepoInfo, CachedRevisionInfo, dict[str, CachedFileInfo]]]:
    """Every cached revision of every repository (by id), with its files by their path in the repository."""
    from huggingface_hub import scan_cache_dir
    from huggingface_hub.errors import CacheNotFound

    try:
        repos = scan_cache_dir().repos
    except CacheNotFound:
        return
    for repo in sorted(repos, key=lambda repo: repo.repo_id):
        for revision in repo.revisions:
            files = {file.file_path.relative_to(revision.snapshot_path).as_posix(): file for file in revision.files}
            yield repo, revision, files
